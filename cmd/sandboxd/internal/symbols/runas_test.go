package symbols

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// TestCtagsRunsAsCredential: with a Credential ctags runs as that user,
// so a file only root may read has no symbols in the index; without one,
// ctags runs as sandboxd's user, as before.
func TestCtagsRunsAsCredential(t *testing.T) {
	needTools(t)
	proctest.RequireRoot(t)
	// Not t.TempDir: its parent is root's alone (0700).
	dir, err := os.MkdirTemp("", "symbols-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"open.go": 0o644, "private.go": 0o600} {
		src := "package p\n\nfunc OneIn" + map[string]string{"open.go": "Open", "private.go": "Private"}[name] + "() {}\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), mode); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	for _, c := range []struct {
		cred *syscall.Credential
		want string
	}{
		{nil, "open.go:3: function p.OneInOpen()\nprivate.go:3: function p.OneInPrivate()\n(2 matches)"},
		{nobody, "open.go:3: function p.OneInOpen()\n(1 match)"},
	} {
		s, err := search.New(ws, search.Options{Credential: c.cred})
		if err != nil {
			t.Fatal(err)
		}
		x := New(ws.Dir(), s, Options{Credential: c.cred})
		if got := searchOK(t, x, "onein", "", 0); got != c.want {
			t.Errorf("as %v:\n%s\nwant\n%s", c.cred, got, c.want)
		}
		x.Close()
		s.Close()
	}
}
