package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/escapetest"
)

// fixture is escapetest's layout, opened as a workspace.
type fixture struct {
	*escapetest.Fixture
	w *Workspace
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{Fixture: escapetest.New(t)}
	w, err := Open(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	f.w = w
	return f
}

func TestLegitimatePathsWork(t *testing.T) {
	f := newFixture(t)
	for path, want := range f.Legit() {
		got, err := f.w.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}

func TestEscapesAreRefused(t *testing.T) {
	f := newFixture(t)
	paths := f.Escapes()
	if len(paths) < 30 {
		t.Fatalf("only %d escape attempts", len(paths))
	}
	for _, path := range paths {
		got, err := f.w.ReadFile(path)
		if err == nil || strings.Contains(string(got), "SECRET") {
			t.Errorf("ReadFile(%q) = %q, %v: reached outside", path, got, err)
			continue
		}
		if !IsOutside(err) || !strings.Contains(err.Error(), "is outside the workspace") {
			t.Errorf("ReadFile(%q): %v: not an outside-the-workspace error", path, err)
		}
		if _, err := f.w.Stat(path); !IsOutside(err) {
			t.Errorf("Stat(%q): %v", path, err)
		}
		if err := f.w.WriteFile(path, []byte("pwned"), 0o644); !IsOutside(err) {
			t.Errorf("WriteFile(%q): %v", path, err)
		}
	}
	if got, _ := os.ReadFile(f.Secret); string(got) != escapetest.Secret {
		t.Fatalf("the secret was overwritten: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(f.Secret)); len(entries) != 1 {
		t.Fatalf("files appeared outside: %v", entries)
	}
}

func TestBadPaths(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"", "file\x00.txt"} {
		if _, err := f.w.ReadFile(path); err == nil {
			t.Errorf("ReadFile(%q): no error", path)
		}
	}
	if _, err := f.w.ReadFile("missing.txt"); !errors.Is(err, fs.ErrNotExist) || IsOutside(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteFileAtomicKeepsModeCreatesParents(t *testing.T) {
	f := newFixture(t)
	script := filepath.Join(f.Dir, "run.sh")
	if err := os.WriteFile(script, []byte("old"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := f.w.WriteFile("run.sh", []byte("#!/bin/sh\necho new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(script)
	if got, _ := os.ReadFile(script); string(got) != "#!/bin/sh\necho new\n" || fi.Mode().Perm() != 0o750 {
		t.Errorf("content %q mode %v", got, fi.Mode().Perm())
	}
	if err := f.w.WriteFile("new/deep/file.go", []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.Dir, "new/deep/file.go"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v %v", fi, err)
	}
	// Through an in-root symlink the target is replaced, the link kept.
	if err := f.w.WriteFile("in-link", []byte("via link"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.Dir, "file.txt")); string(got) != "via link" {
		t.Errorf("target = %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(f.Dir, "in-link")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if err := f.w.WriteFile("dir", []byte("x"), 0o644); err == nil {
		t.Error("writing over a directory: no error")
	}
	// No temporary files are left behind.
	matches, _ := filepath.Glob(filepath.Join(f.Dir, "*", ".*.tmp-*"))
	top, _ := filepath.Glob(filepath.Join(f.Dir, ".*.tmp-*"))
	if len(matches)+len(top) > 0 {
		t.Errorf("temporary files left: %v %v", matches, top)
	}
}

// TestSymlinkSwappedInWhileReading swaps a directory inside the
// workspace for a symlink out of it, over and over, while reads and
// writes go through it: none may reach the outside.
func TestSymlinkSwappedInWhileReading(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Dir(f.Secret)
	if err := os.WriteFile(filepath.Join(outside, "target.txt"), []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	swap := filepath.Join(f.Dir, "swap")
	if err := os.Mkdir(swap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(swap, "target.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		asDir, asLink := swap+".dir", swap+".link"
		_ = os.Symlink(outside, asLink)
		for !stop.Load() {
			_ = os.Rename(swap, asDir)
			_ = os.Rename(asLink, swap)
			_ = os.Rename(swap, asLink)
			_ = os.Rename(asDir, swap)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	reads, insides := 0, 0
	for time.Now().Before(deadline) {
		got, err := f.w.ReadFile("swap/target.txt")
		reads++
		if strings.Contains(string(got), "SECRET") {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("read %d reached outside through the swapped symlink", reads)
		}
		if err == nil {
			insides++
		}
		_ = f.w.WriteFile("swap/target.txt", []byte("inside"), 0o644)
	}
	stop.Store(true)
	wg.Wait()
	if got, _ := os.ReadFile(filepath.Join(outside, "target.txt")); string(got) != escapetest.Secret {
		t.Fatalf("a write went outside: %q", got)
	}
	if insides == 0 {
		t.Errorf("no read of %d saw the file inside (the swap never let it through)", reads)
	}
	t.Logf("%d reads, %d inside, none outside", reads, insides)
}
