package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// fixture is a workspace under base/ws, with base/outside beside it.
type fixture struct {
	base, dir string
	ws        *workspace.Workspace
	s         *Searcher
}

// epoch is the mtime every fixture file gets, so Glob's order is by path
// unless a test says otherwise.
var epoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func newFixture(t *testing.T, files map[string]string, opts Options) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{base: base, dir: filepath.Join(base, "ws")}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, files)
	ws, err := workspace.Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	f.ws = ws
	if f.s, err = New(ws, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.s.Close() })
	return f
}

// write creates files (relative to the workspace, or to base when they
// start with "../"); content "->target" makes a symlink.
func (f *fixture) write(t *testing.T, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if to, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(to, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, epoch, epoch); err != nil {
			t.Fatal(err)
		}
	}
}

// abs turns workspace-relative names into the absolute paths results carry.
func (f *fixture) abs(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(f.dir, n)
	}
	return out
}

// gitInit makes the workspace a real git repository.
func (f *fixture) gitInit(t *testing.T) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", f.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}

func sorted(s string) []string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return lines
}

func lines(s ...string) string { return strings.Join(s, "\n") }

func TestNewWithoutRipgrep(t *testing.T) {
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_, err = New(ws, Options{RipgrepPath: filepath.Join(t.TempDir(), "rg")})
	if err == nil || !strings.Contains(err.Error(), "Debian package ripgrep") {
		t.Fatalf("New without rg: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err = New(ws, Options{}); err == nil || !strings.Contains(err.Error(), "ripgrep") {
		t.Fatalf("New with rg missing from PATH: %v", err)
	}
	if _, err = New(nil, Options{}); err == nil {
		t.Fatal("New(nil): no error")
	}
}

// Paths that leave the workspace are refused by both tools, with the
// workspace's own error in the chain.
func TestOutsidePathsRefused(t *testing.T) {
	f := newFixture(t, map[string]string{
		"../outside/secret.txt": "SECRET",
		"in.txt":                "SECRET inside",
		"out-link":              "->../outside",
		"out-abs":               "->" + "/etc",
	}, Options{})
	for _, path := range []string{"..", "../outside", "../outside/secret.txt", filepath.Join(f.base, "outside"), "/etc", "out-link", "out-link/secret.txt", "out-abs", f.dir + "/../outside"} {
		_, err := f.s.Glob(context.Background(), "**/*", path)
		if !workspace.IsOutside(err) || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("Glob path %q: %v", path, err)
		}
		_, err = f.s.Grep(context.Background(), GrepRequest{Pattern: "SECRET", Path: path})
		if !workspace.IsOutside(err) || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("Grep path %q: %v", path, err)
		}
	}
	// Walking does not follow the link out either.
	got, err := f.s.Glob(context.Background(), "**/*", "")
	if want := lines(f.abs("in.txt")...); err != nil || got != want {
		t.Errorf("Glob **/* = %q, %v; want %q", got, err, want)
	}
	got, err = f.s.Grep(context.Background(), GrepRequest{Pattern: "SECRET"})
	if want := lines(f.abs("in.txt")...); err != nil || got != want {
		t.Errorf("Grep SECRET = %q, %v; want %q", got, err, want)
	}
}

func TestBadPathsRefused(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "x", ".git/config": "x", "git-link": "->.git"}, Options{})
	if err := syscall.Mkfifo(filepath.Join(f.dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		".git":        "inside a .git directory",
		".git/config": "inside a .git directory",
		"git-link":    "inside a .git directory",
		"missing":     `path "missing" does not exist`,
		"fifo":        "neither a regular file nor a directory",
		"a\x00b":      "NUL",
	} {
		_, err := f.s.Grep(context.Background(), GrepRequest{Pattern: "x", Path: path})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "grep: ") {
			t.Errorf("Grep path %q: %v; want %q", path, err, want)
		}
	}
	for _, path := range []string{".git", "git-link"} {
		if _, err := f.s.Glob(context.Background(), "*", path); err == nil || !strings.Contains(err.Error(), "inside a .git directory") {
			t.Errorf("Glob path %q: %v", path, err)
		}
	}
	if _, err := f.s.Glob(context.Background(), "*", "a.txt"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Glob on a file: %v", err)
	}
}

// Cancelling the context kills rg.
func TestCancelKillsRipgrep(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "rg")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{"a.txt": "x"}, Options{RipgrepPath: fake})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.s.Grep(ctx, GrepRequest{Pattern: "x"})
	if err == nil || ctx.Err() == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("Grep: %v", err)
	}
	_, err = f.s.Glob(ctx, "*", "")
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("Glob after the deadline: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
}

// rg exits 2 after matches when some file could not be read: the matches
// stand, with its complaint as a note.
func TestRipgrepWarningsKeepMatches(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "rg")
	f := newFixture(t, map[string]string{"a.txt": "x"}, Options{})
	a := f.abs("a.txt")[0]
	// Grep reads rg's matching lines, each after its file's path and a NUL.
	script := "#!/bin/sh\nprintf '%s\\0001:x\\n' '" + a + "'\necho 'a.txt: Permission denied (os error 13)' >&2\nexit 2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := New(f.ws, Options{RipgrepPath: fake})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Grep(context.Background(), GrepRequest{Pattern: "x"})
	want := a + "\n(rg could not read everything: a.txt: Permission denied (os error 13))"
	if err != nil || got != want {
		t.Fatalf("Grep = %q, %v; want %q", got, err, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
