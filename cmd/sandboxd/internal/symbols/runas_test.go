package symbols

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// nobody is the unprivileged user the Credential tests run ctags as.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}

// TestCtagsRunsAsCredential: with a Credential ctags runs as that user,
// so a file only root may read has no symbols in the index; without one,
// ctags runs as sandboxd's user, as before.
func TestCtagsRunsAsCredential(t *testing.T) {
	needTools(t)
	proctest.RequireRoot(t)
	dir := proctest.OpenTempDir(t, "symbols-runas-")
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

// TestCtagsTimeoutKillsItsGroupAsCredential: a ctags run as another user
// that hangs is still killed, with its children, when the timeout passes.
func TestCtagsTimeoutKillsItsGroupAsCredential(t *testing.T) {
	needTools(t)
	proctest.RequireRoot(t)
	dir := proctest.OpenTempDir(t, "symbols-runas-")
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc Square() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := proctest.OpenTempDir(t, "symbols-runas-")
	if err := os.Chmod(bin, 0o777); err != nil { // the fake writes here
		t.Fatal(err)
	}
	pidFile := filepath.Join(bin, "child.pid")
	fake := filepath.Join(bin, "ctags")
	script := "#!/bin/sh\nid -u > " + pidFile + ".uid\nsleep 60 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	s, err := search.New(ws, search.Options{Credential: nobody})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	x := New(ws.Dir(), s, Options{Credential: nobody, CtagsPath: fake, Timeout: 500 * time.Millisecond})
	t.Cleanup(func() { x.Close() })
	if got := searchOK(t, x, "Square", "", 0); !strings.Contains(got, "ctags timed out after 500ms") {
		t.Fatalf("with a hanging ctags:\n%s", got)
	}
	if uid, _ := os.ReadFile(pidFile + ".uid"); string(uid) != "65534\n" {
		t.Errorf("ctags ran as uid %q, want 65534", uid)
	}
	proctest.Gone(t, "ctags' child", proctest.ReadPIDs(t, pidFile, 1)[0])
}
