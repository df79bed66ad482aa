package shells

import (
	"os"
	"path/filepath"
	"testing"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// newManager returns a Manager on a fresh workspace, closed when the test
// ends.
func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Env == nil {
		opts.Env = []string{"PATH=/usr/bin:/bin"}
	}
	m := New(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func inDir(m *Manager, name string) string { return filepath.Join(m.opts.Dir, name) }
