package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// fixture is a workspace with a secret outside it:
//
//	outside/secret   what every escape tries to reach
//	ws/              the workspace, with Files over it
type fixture struct {
	dir, secret string
	ws          *workspace.Workspace
	f           *Files
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	base := t.TempDir()
	fx := &fixture{dir: filepath.Join(base, "ws"), secret: filepath.Join(base, "outside", "secret")}
	if err := os.MkdirAll(fx.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(fx.secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.secret, []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	fx.ws = ws
	fx.f = New(ws, opts)
	return fx
}

// path is rel's absolute path in the workspace.
func (fx *fixture) path(rel string) string { return filepath.Join(fx.dir, rel) }

// put writes a file behind the tools' back, as another process would.
func (fx *fixture) put(t *testing.T, rel, content string) {
	t.Helper()
	p := fx.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (fx *fixture) content(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(fx.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (fx *fixture) read(t *testing.T, l *Ledger, path string, offset, limit int) string {
	t.Helper()
	out, err := fx.f.Read(l, path, offset, limit)
	if err != nil {
		t.Fatalf("Read(%q, %d, %d): %v", path, offset, limit, err)
	}
	return out
}

// wantErr fails unless err's message holds every one of parts.
// wantMode fails unless the file at rel has permission bits want.
func (fx *fixture) wantMode(t *testing.T, rel string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(fx.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one holding %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not hold %q", err, p)
		}
	}
}

func wantEqual(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got:\n%q\nwant:\n%q", got, want)
	}
}
