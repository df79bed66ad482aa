package server

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/escapetest"
)

// TestPathEscapesAreRefused tries every escape through every tool that
// takes a path, over MCP; each is refused with a message saying the path
// is outside the workspace, and nothing outside is read or written.
func TestPathEscapesAreRefused(t *testing.T) {
	f := escapetest.New(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: f.Dir}}})
	cs := d.connect(t, streamable)
	// abs-in, an absolute symlink to a file inside, is followed now
	// (TestAbsoluteSymlinksInsideWork).
	escapes := f.Escapes()
	if len(escapes) < 30 {
		t.Fatalf("only %d escapes", len(escapes))
	}
	for _, path := range escapes {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"Read", map[string]any{"file_path": path}},
			{"Write", map[string]any{"file_path": path, "content": "PWNED"}},
			{"Edit", map[string]any{"file_path": path, "old_string": "SECRET", "new_string": "PWNED"}},
			{"Glob", map[string]any{"pattern": "**", "path": path}},
			{"Grep", map[string]any{"pattern": "SECRET", "path": path, "output_mode": "content"}},
		} {
			r := call(t, cs, c.tool, c.args)
			if !r.IsError || !strings.Contains(r.Text, "outside the workspace") {
				t.Errorf("%s(%q) = %+v; want an error saying it is outside the workspace", c.tool, path, r)
			}
			if strings.Contains(r.Text, escapetest.Secret) || strings.Contains(r.Text, "root:") {
				t.Errorf("%s(%q) leaked outside content: %q", c.tool, path, r.Text)
			}
		}
	}
	if b, _ := os.ReadFile(f.Secret); string(b) != escapetest.Secret {
		t.Fatalf("the outside file was changed: %q", b)
	}
}

// TestInRootSymlinksWork: symlinks that stay inside are followed.
func TestInRootSymlinksWork(t *testing.T) {
	f := escapetest.New(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: f.Dir}}})
	cs := d.connect(t, streamable)
	for path, content := range f.Legit() {
		want := "     1\t" + content
		if got := ok(t, cs, "Read", map[string]any{"file_path": path}); got != want {
			t.Errorf("Read(%q) = %q, want %q", path, got, want)
		}
	}
	ok(t, cs, "Write", map[string]any{"file_path": "dir-link/new.txt", "content": "via link\n"})
	if b, _ := os.ReadFile(filepath.Join(f.Dir, "dir", "new.txt")); string(b) != "via link\n" {
		t.Errorf("write through an in-root link: %q", b)
	}
}

// TestSymlinkSwappedDuringCalls swaps a directory for a symlink to the
// outside, over and over, while Read and Write go through it over MCP:
// for 2 s, or 500 ms under -short (the swapping keeps a CPU busy).
func TestSymlinkSwappedDuringCalls(t *testing.T) {
	t.Parallel()
	f := escapetest.New(t)
	outside := filepath.Dir(f.Secret)
	os.WriteFile(filepath.Join(outside, "target.txt"), []byte("SECRET-OUTSIDE\n"), 0o600)
	swap := filepath.Join(f.Dir, "swap")
	os.Mkdir(swap, 0o755)
	os.WriteFile(filepath.Join(swap, "target.txt"), []byte("inside\n"), 0o644)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: f.Dir}}})
	reader, writer := d.connect(t, streamable), d.connect(t, sse)
	ok(t, writer, "Read", map[string]any{"file_path": "swap/target.txt"})

	var stop atomic.Bool
	var wg sync.WaitGroup
	// Stopped before the temporary directory goes, however the test ends.
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		asDir, asLink := swap+".dir", swap+".link"
		os.Symlink(outside, asLink)
		for !stop.Load() {
			os.Rename(swap, asDir)
			os.Rename(asLink, swap)
			os.Rename(swap, asLink)
			os.Rename(asDir, swap)
		}
	}()
	swapping := 2 * time.Second
	if testing.Short() {
		swapping = 500 * time.Millisecond
	}
	deadline := time.Now().Add(swapping)
	calls := 0
	for time.Now().Before(deadline) {
		r := call(t, reader, "Read", map[string]any{"file_path": "swap/target.txt"})
		w := call(t, writer, "Write", map[string]any{"file_path": "swap/target.txt", "content": "inside\n"})
		calls += 2
		if strings.Contains(r.Text, "SECRET") || strings.Contains(w.Text, "SECRET") {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("call %d reached outside through the swapped symlink: %q %q", calls, r.Text, w.Text)
		}
		// After a refused or raced write, the ledger may be stale; read again.
		call(t, writer, "Read", map[string]any{"file_path": "swap/target.txt"})
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "target.txt")); string(b) != "SECRET-OUTSIDE\n" {
		t.Fatalf("a write went outside: %q", b)
	}
	t.Logf("%d calls, none outside", calls)
}

// TestAbsoluteSymlinksInsideWork: an absolute symlink whose target is
// inside the workspace works for every tool that takes a path, as a
// relative one does, and one leading out is still refused; a chain is
// judged by its final target.
func TestAbsoluteSymlinksInsideWork(t *testing.T) {
	f := escapetest.New(t)
	for link, to := range map[string]string{
		"abs-dir":       filepath.Join(f.Dir, "dir"),
		"abs-chain":     filepath.Join(f.Dir, "chain1"),  // then relative, twice
		"abs-chain-out": filepath.Join(f.Dir, "out-rel"), // then relative, out
	} {
		if err := os.Symlink(to, filepath.Join(f.Dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: f.Dir}}})
	cs := d.connect(t, streamable)
	for _, path := range []string{"abs-in", "abs-chain", filepath.Join(f.Dir, "abs-in")} {
		if got := ok(t, cs, "Read", map[string]any{"file_path": path}); got != "     1\tinside" {
			t.Errorf("Read(%q) = %q", path, got)
		}
	}
	ok(t, cs, "Edit", map[string]any{"file_path": "abs-in", "old_string": "inside", "new_string": "edited"})
	if b, _ := os.ReadFile(filepath.Join(f.Dir, "file.txt")); string(b) != "edited" {
		t.Errorf("Edit through abs-in left file.txt %q", b)
	}
	ok(t, cs, "Read", map[string]any{"file_path": "abs-in"})
	ok(t, cs, "Write", map[string]any{"file_path": "abs-in", "content": "written\n"})
	ok(t, cs, "Write", map[string]any{"file_path": "abs-dir/new.txt", "content": "new needle\n"})
	if b, _ := os.ReadFile(filepath.Join(f.Dir, "file.txt")); string(b) != "written\n" {
		t.Errorf("Write through abs-in left file.txt %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(f.Dir, "abs-in")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("abs-in is no longer a symlink: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.Dir, "dir", "new.txt")); string(b) != "new needle\n" {
		t.Errorf("Write through abs-dir: dir/new.txt holds %q", b)
	}
	if got := ok(t, cs, "Glob", map[string]any{"pattern": "*.txt", "path": "abs-dir"}); !sameLines(got, filepath.Join(f.Dir, "abs-dir", "nested.txt")+"\n"+filepath.Join(f.Dir, "abs-dir", "new.txt")) {
		t.Errorf("Glob in abs-dir: %q", got)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "path": "abs-dir", "output_mode": "content"}); got != filepath.Join(f.Dir, "abs-dir", "new.txt")+":1:new needle" {
		t.Errorf("Grep in abs-dir: %q", got)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "written", "path": "abs-in", "output_mode": "content"}); got != filepath.Join(f.Dir, "abs-in")+":1:written" {
		t.Errorf("Grep of abs-in: %q", got)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"Read", map[string]any{"file_path": "abs-chain-out"}},
		{"Write", map[string]any{"file_path": "abs-chain-out", "content": "PWNED"}},
		{"Grep", map[string]any{"pattern": "SECRET", "path": "abs-chain-out"}},
	} {
		if r := call(t, cs, c.tool, c.args); !r.IsError || !strings.Contains(r.Text, "outside the workspace") {
			t.Errorf("%s(abs-chain-out) = %+v; want refused as outside", c.tool, r)
		}
	}
	if b, _ := os.ReadFile(f.Secret); string(b) != escapetest.Secret {
		t.Fatalf("the outside file was changed: %q", b)
	}
}

// TestPathLimitsOverMCP: one Write of a 100 KB path is refused, saying
// why in a short message, and creates no directory; so is a path 65
// directories deep.
func TestPathLimitsOverMCP(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, c := range []struct{ path, want string }{
		{strings.Repeat("a/", 50000) + "f", "is 100001 bytes long; a workspace path may be at most 4096"},
		{strings.Repeat("d/", 65) + "f", "is 66 directories deep; a workspace path may be at most 64"},
	} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"Write", map[string]any{"file_path": c.path, "content": "x"}},
			{"Read", map[string]any{"file_path": c.path}},
		} {
			tool := call.tool
			got := fails(t, cs, tool, call.args)
			if !strings.Contains(got, c.want) || len(got) > 400 {
				t.Errorf("%s of a %d-byte path: %.400q; want a short error saying %q", tool, len(c.path), got, c.want)
			}
		}
	}
	if entries, _ := os.ReadDir(d.dir); len(entries) != 0 {
		t.Errorf("refused writes left %d entries in the workspace", len(entries))
	}
	ok(t, cs, "Write", map[string]any{"file_path": strings.Repeat("d/", 63) + "f", "content": "64 deep is fine\n"})
}
