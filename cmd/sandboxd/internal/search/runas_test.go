package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// nobody is the unprivileged user the Credential tests run rg as.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}

// rootOnlyWorkspace is a workspace the agent (nobody) can walk, holding a
// file and a directory only root may read, each with "needle" in it.
func rootOnlyWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	proctest.RequireRoot(t)
	base := proctest.OpenTempDir(t, "search-runas-")
	for name, mode := range map[string]os.FileMode{"open.txt": 0o644, "private.txt": 0o600, "closed/inner.txt": 0o644} {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("needle in "+name+"\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// TestRipgrepRunsAsCredential: with a Credential rg runs as that user, so
// Grep and Glob see what it may read and no more; without one, rg runs as
// sandboxd's user, as before.
func TestRipgrepRunsAsCredential(t *testing.T) {
	ws := rootOnlyWorkspace(t)
	abs := func(name string) string { return filepath.Join(ws.Dir(), name) }
	for _, c := range []struct {
		cred       *syscall.Credential
		grep       []string // files_with_matches, sorted, before any note
		glob       []string
		unreadable bool // rg notes what it could not read
	}{
		{nil, []string{abs("closed/inner.txt"), abs("open.txt"), abs("private.txt")}, []string{abs("closed/inner.txt"), abs("open.txt"), abs("private.txt")}, false},
		// Listing needs no read of the file, only of its directory.
		{nobody, []string{abs("open.txt")}, []string{abs("open.txt"), abs("private.txt")}, true},
	} {
		s, err := New(ws, Options{Credential: c.cred})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
		if err != nil {
			t.Fatalf("Grep as %v: %v", c.cred, err)
		}
		found, note, _ := strings.Cut(got, "\n(rg could not read everything: ")
		if g := sorted(found); strings.Join(g, "\n") != strings.Join(c.grep, "\n") {
			t.Errorf("Grep as %v: %q, want %q", c.cred, g, c.grep)
		}
		if (note != "") != c.unreadable || c.unreadable && !strings.Contains(note, "Permission denied") {
			t.Errorf("Grep as %v: note %q", c.cred, note)
		}
		got, err = s.Glob(context.Background(), "**/*", "")
		if err != nil {
			t.Fatalf("Glob as %v: %v", c.cred, err)
		}
		found, _, _ = strings.Cut(got, "\n(rg could not read everything: ")
		if g := sorted(found); strings.Join(g, "\n") != strings.Join(c.glob, "\n") {
			t.Errorf("Glob as %v: %q, want %q", c.cred, g, c.glob)
		}
		s.Close()
	}
}

// TestStaterFollowsNoLinks: a Stater describes files through real
// directories only; through a link out it refuses, through a link that
// stays inside it answers as the workspace would, and it watches no
// directory reached through a link.
func TestStaterFollowsNoLinks(t *testing.T) {
	f := newFixture(t, map[string]string{
		"real/f.txt":         "inside",
		"in-link":            "->real",
		"out-link":           "->../outside",
		"../outside/f.txt":   "outside, and bigger",
		"../outside/only.go": "x",
	}, Options{})
	st, err := f.s.NewStater()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fi, err := st.Lstat(filepath.Join(f.dir, "real/f.txt"))
	if err != nil || !fi.Mode.IsRegular() || fi.Size != int64(len("inside")) || fi.Mtime != epoch.UnixNano() {
		t.Errorf("real/f.txt: %+v, %v", fi, err)
	}
	if fi, err := st.Lstat(filepath.Join(f.dir, "in-link/f.txt")); err != nil || fi.Size != int64(len("inside")) {
		t.Errorf("in-link/f.txt: %+v, %v", fi, err)
	}
	if fi, err := st.Lstat(filepath.Join(f.dir, "out-link")); err != nil || fi.Mode&os.ModeSymlink == 0 {
		t.Errorf("out-link itself: %+v, %v", fi, err)
	}
	if fi, err := st.Lstat(f.dir); err != nil || !fi.Mode.IsDir() {
		t.Errorf("the workspace: %+v, %v", fi, err)
	}
	for _, name := range []string{"out-link/f.txt", "out-link/only.go"} {
		if fi, err := st.Lstat(filepath.Join(f.dir, name)); !workspace.IsOutside(err) {
			t.Errorf("%s: %+v, %v; want outside the workspace", name, fi, err)
		}
	}
	if _, err := st.Lstat(filepath.Join(f.base, "outside/f.txt")); err == nil {
		t.Error("a path outside the workspace was stat'ed")
	}
	if _, err := st.Lstat(filepath.Join(f.dir, "real/missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("real/missing: %v", err)
	}

	w := NewDirWatcher(10)
	defer w.Close()
	if !st.WatchDir(w, filepath.Join(f.dir, "real/f.txt")) {
		t.Error("real/ not watched")
	}
	for _, name := range []string{"out-link/f.txt", "in-link/f.txt"} {
		if st.WatchDir(w, filepath.Join(f.dir, name)) {
			t.Errorf("%s: its directory, reached through a link, is watched", name)
		}
	}
	if _, watched := w.known(filepath.Join(f.dir, "out-link")); watched {
		t.Error("out-link is watched")
	}
}

// TestCancelKillsRipgrepAsCredential: rg started as another user is
// still killed when the call's context ends.
func TestCancelKillsRipgrepAsCredential(t *testing.T) {
	ws := rootOnlyWorkspace(t)
	bin, err := os.MkdirTemp("", "search-fake-rg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	pidFile := filepath.Join(bin, "pid")
	fake := filepath.Join(bin, "rg")
	script := "#!/bin/sh\nid -u > " + pidFile + ".uid\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 60\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o777); err != nil { // the fake writes its pid here
		t.Fatal(err)
	}
	s, err := New(ws, Options{RipgrepPath: fake, Credential: nobody})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, err := s.Grep(ctx, GrepRequest{Pattern: "x"}); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("Grep: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake rg did not start: %v", err)
	}
	if uid, _ := os.ReadFile(pidFile + ".uid"); string(uid) != "65534\n" {
		t.Errorf("rg ran as uid %q, want 65534", uid)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	proctest.Gone(t, "rg run as nobody", pid)
}

// TestRipgrepEnvironment: given an environment, rg gets it and nothing
// of sandboxd's own (which a process of rg's user could read in
// /proc/PID/environ); given none, it gets sandboxd's, as before.
func TestRipgrepEnvironment(t *testing.T) {
	t.Setenv("SEARCH_TEST_SANDBOXD_ONLY", "sandboxd-only-value")
	out := filepath.Join(t.TempDir(), "env")
	fake := filepath.Join(t.TempDir(), "rg")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nenv > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{"a.txt": "x"}, Options{})
	for _, c := range []struct {
		env        []string
		want, gone string
	}{
		{[]string{"HOME=/agent/home", "AGENT_ONLY=1"}, "AGENT_ONLY=1\n", "SEARCH_TEST_SANDBOXD_ONLY"},
		{nil, "SEARCH_TEST_SANDBOXD_ONLY=sandboxd-only-value\n", "AGENT_ONLY"},
	} {
		s, err := New(f.ws, Options{RipgrepPath: fake, Env: c.env})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Grep(context.Background(), GrepRequest{Pattern: "x"}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); !strings.Contains(got, c.want) || strings.Contains(got, c.gone) {
			t.Errorf("with Env %q rg's environment is\n%s\nwant %q in it and no %s", c.env, got, c.want, c.gone)
		}
	}
}
