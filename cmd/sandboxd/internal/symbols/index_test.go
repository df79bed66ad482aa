package symbols

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// needTools skips when ctags or rg is absent, unless CI is set.
func needTools(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"ctags", "rg"} {
		if _, err := exec.LookPath(bin); err != nil {
			ci.Skipf(t, "%s is not installed (apt-get install -y universal-ctags ripgrep)", bin)
		}
	}
}

// newIndex copies testdata/<fixture> into a fresh workspace and indexes it.
func newIndex(t *testing.T, fixture string) (*Index, string) {
	t.Helper()
	needTools(t)
	dir := t.TempDir()
	if fixture != "" {
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", fixture))); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	s, err := search.New(ws, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	x := New(ws.Dir(), s, Options{})
	t.Cleanup(func() { _ = x.Close() })
	return x, ws.Dir()
}

func searchOK(t *testing.T, x *Index, query, kind string, limit int) string {
	t.Helper()
	out, err := x.Search(context.Background(), query, kind, limit)
	if err != nil {
		t.Fatalf("Search(%q, %q): %v", query, kind, err)
	}
	return out
}

// TestKindsAcrossLanguages: each language's definitions come back under
// the same normalized kinds, with their positions and signatures.
func TestKindsAcrossLanguages(t *testing.T) {
	x, _ := newIndex(t, "polyglot")
	cases := []struct{ query, kind, want string }{
		{"area", "method", "shapes.go:5: method shapes.Shape.Area()\nshapes.go:14: method shapes.Square.Area()\nshapes.py:2: method Circle.circle_area(self, scale)\nshapes.ts:6: method Triangle.triangleArea\n(4 matches) [kind method]"},
		{"make", "function", "shapes.rs:15: function make_cube(edge: f64) -> Cube\nshapes.py:6: function make_circle(radius)\nshapes.ts:11: function makeTriangle\n(3 matches) [kind function]"},
		{"NewSquare", "", "shapes.go:17: function shapes.NewSquare(side float64)\n(1 match)"},
		{"", "", ""},
		{"s", "interface", "shapes.go:4: interface shapes.Shape\nshapes.rs:1: interface Solid\n(2 matches) [kind interface]"},
		{"o", "type", "shapes.ts:17: enum Orientation\nshapes.rs:1: interface Solid\nshapes.ts:1: interface Polygon\n(3 matches) [kind type]"},
		{"cube", "struct", "shapes.rs:5: struct Cube\n(1 match) [kind struct]"},
		{"i", "class", "shapes.py:1: class Circle\nshapes.ts:5: class Triangle\n(2 matches) [kind class]"},
		{"limit", "constant", "shapes.ts:15: constant TRIANGLE_LIMIT\n(1 match) [kind constant]"},
		{"limit", "variable", "shapes.py:10: variable CIRCLE_LIMIT\n(1 match) [kind variable]"},
		{"maxside", "const", "shapes.go:20: constant shapes.MaxSide\n(1 match) [kind const]"},
		{"DefaultSquare", "var", "shapes.go:23: variable shapes.DefaultSquare\n(1 match) [kind var]"},
		{"side", "field", "shapes.go:10: field shapes.Square.Side\n(1 match) [kind field]"},
		{"nothing_here", "", `No symbols match "nothing_here"`},
	}
	for _, c := range cases {
		if c.query == "" {
			continue
		}
		if got := searchOK(t, x, c.query, c.kind, 0); got != c.want {
			t.Errorf("Search(%q, %q):\n%s\nwant\n%s", c.query, c.kind, got, c.want)
		}
	}
	if _, err := x.Search(context.Background(), "a", "gadget", 0); err == nil || !strings.Contains(err.Error(), `unknown kind "gadget"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestRanking: exact names first, then prefixes, then substrings, and
// the limit keeps the best.
func TestRanking(t *testing.T) {
	x, dir := newIndex(t, "")
	src := "package r\n\nfunc XOpen() {}\nfunc Open() {}\nfunc OpenFile() {}\nfunc open() {}\nfunc Reopen() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "r.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "r.go:4: function r.Open()\nr.go:6: function r.open()\nr.go:5: function r.OpenFile()\n(showing 3 of 5 matches; narrow the query or filter by kind)"
	if got := searchOK(t, x, "Open", "", 3); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestIndexFollowsChanges: a file written, changed, removed, a new
// directory, a .gitignore that hides a file and a file moved are all seen
// by the next query.
func TestIndexFollowsChanges(t *testing.T) {
	x, dir := newIndex(t, "polyglot")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(query, want string) {
		t.Helper()
		if got := searchOK(t, x, query, "", 0); got != want {
			t.Fatalf("Search(%q):\n%s\nwant\n%s", query, got, want)
		}
	}
	expect("Fresh", `No symbols match "Fresh"`)
	write("fresh.go", "package shapes\n\nfunc Fresh() {}\n")
	expect("Fresh", "fresh.go:3: function shapes.Fresh()\n(1 match)")
	// Same size, and its time pinned: only the event tells.
	fi, err := os.Stat(filepath.Join(dir, "fresh.go"))
	if err != nil {
		t.Fatal(err)
	}
	write("fresh.go", "package shapes\n\nfunc Stale() {}\n")
	if err := os.Chtimes(filepath.Join(dir, "fresh.go"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	expect("Fresh", `No symbols match "Fresh"`)
	expect("Stale", "fresh.go:3: function shapes.Stale()\n(1 match)")
	write("fresh.go", "package shapes\n\nfunc Renamed() {}\n")
	expect("Renamed", "fresh.go:3: function shapes.Renamed()\n(1 match)")
	write("deep/er/nested.py", "def nested_fn():\n    pass\n")
	expect("nested_fn", "deep/er/nested.py:1: function nested_fn()\n(1 match)")
	write(".gitignore", "deep/\n")
	expect("nested_fn", `No symbols match "nested_fn"`)
	if err := os.Remove(filepath.Join(dir, "fresh.go")); err != nil {
		t.Fatal(err)
	}
	expect("Renamed", `No symbols match "Renamed"`)
	if err := os.Rename(filepath.Join(dir, "shapes.rs"), filepath.Join(dir, "deep/shapes.rs")); err != nil {
		t.Fatal(err)
	}
	expect("make_cube", `No symbols match "make_cube"`)
	if err := os.Remove(filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	expect("make_cube", "deep/shapes.rs:15: function make_cube(edge: f64) -> Cube\n(1 match)")
}

// TestFileNamesAreNotOptions: ctags reads its file list with -L, where a
// line starting with "-" is an option; the agent names the files, so a
// file named like an option is indexed as a file and changes nothing
// else, and one whose name holds a newline is left out.
func TestFileNamesAreNotOptions(t *testing.T) {
	x, dir := newIndex(t, "")
	for name, content := range map[string]string{
		"hidden.go":              "package p\n\nfunc Hidden() {}\n",
		"--exclude=hidden.go":    "package p\n\nfunc Dashed() {}\n",
		"other.go":               "package p\n\nfunc Other() {}\n",
		"nl\n--exclude=other.go": "package p\n\nfunc Newline() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for query, want := range map[string]string{
		"Hidden":  "hidden.go:3: function p.Hidden()\n(1 match)",
		"Dashed":  "--exclude=hidden.go:3: function p.Dashed()\n(1 match)",
		"Other":   "other.go:3: function p.Other()\n(1 match)",
		"Newline": `No symbols match "Newline"`,
	} {
		if got := searchOK(t, x, query, "", 0); got != want {
			t.Errorf("Search(%q):\n%s\nwant\n%s", query, got, want)
		}
	}
}

// TestFailedBuildIsRetried: a build that failed (no ctags) is not
// remembered; the next query builds.
func TestFailedBuildIsRetried(t *testing.T) {
	x, _ := newIndex(t, "polyglot")
	x.opts.CtagsPath = "no-such-ctags"
	if _, err := x.Search(context.Background(), "Square", "", 0); err == nil || !strings.Contains(err.Error(), "universal-ctags") {
		t.Fatalf("without ctags: %v", err)
	}
	x.opts.CtagsPath = "ctags"
	if got := searchOK(t, x, "Square", "struct", 0); got != "shapes.go:9: struct shapes.Square\n(1 match) [kind struct]" {
		t.Fatalf("after ctags came back:\n%s", got)
	}
}

// TestTSX: .tsx files, which ctags does not map to TypeScript by itself,
// are indexed.
func TestTSX(t *testing.T) {
	x, _ := newIndex(t, "polyglot")
	if got, want := searchOK(t, x, "renderwidget", "", 0), "widget.tsx:1: function renderWidget\n(1 match)"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLimits: files past the size cap are left out, and past the count
// cap the answer says the index is partial.
func TestLimits(t *testing.T) {
	x, dir := newIndex(t, "")
	x.opts.MaxFileSize = 100
	big := "package big\n\nfunc BigFunc() {}\n" + strings.Repeat("// padding\n", 20)
	for name, content := range map[string]string{"big.go": big, "a.go": "package a\n\nfunc SmallA() {}\n", "b.go": "package a\n\nfunc SmallB() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := searchOK(t, x, "BigFunc", "", 0); got != `No symbols match "BigFunc"` {
		t.Fatalf("a file past the size cap: %q", got)
	}
	fresh := func(opts Options) *Index {
		y := New(dir, x.files, opts)
		t.Cleanup(func() { _ = y.Close() })
		return y
	}
	if got := searchOK(t, fresh(Options{MaxFiles: 1, MaxFileSize: 100}), "Small", "", 0); !strings.HasSuffix(got, "(1 match)\n(only the first 1 files are indexed)") {
		t.Fatalf("past the count cap: %q", got)
	}
	// a.go and b.go hold one function each (a Go package clause is not kept).
	if got := searchOK(t, fresh(Options{MaxSymbols: 1, MaxFileSize: 100}), "Small", "", 0); !strings.HasSuffix(got, "(1 match)\n(the index holds at most 1 symbols; some files' are left out)") {
		t.Fatalf("past the symbol cap: %q", got)
	}
	if got := searchOK(t, fresh(Options{MaxSymbols: 2, MaxFileSize: 100}), "Small", "", 0); got != "a.go:3: function a.SmallA()\nb.go:3: function a.SmallB()\n(2 matches)" {
		t.Fatalf("at the symbol cap: %q", got)
	}
}

// TestCtagsTimeoutKillsItsGroup: a ctags that hangs is killed with its
// children when the timeout passes, the answer says what was not
// indexed, and the next query tries those files again.
func TestCtagsTimeoutKillsItsGroup(t *testing.T) {
	x, _ := newIndex(t, "polyglot")
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	fake := filepath.Join(t.TempDir(), "ctags")
	script := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	x.opts.CtagsPath, x.opts.Timeout = fake, 300*time.Millisecond
	got := searchOK(t, x, "Square", "", 0)
	if !strings.HasPrefix(got, `No symbols match "Square"`) || !strings.Contains(got, "files could not be indexed and will be tried again: ctags timed out after 300ms") {
		t.Fatalf("with a hanging ctags:\n%s", got)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("ctags' child %d outlived the timeout", pid)
		}
	}
	x.ctags = "" // look the real one up again
	x.opts.CtagsPath = "ctags"
	if got, want := searchOK(t, x, "Square", "struct", 0), "shapes.go:9: struct shapes.Square\n(1 match) [kind struct]"; got != want {
		t.Fatalf("after the retry:\n%s\nwant\n%s", got, want)
	}
}

// TestWithoutEnoughWatches: past the watch cap, changes in directories
// that are not watched are still seen, by listing everything again.
func TestWithoutEnoughWatches(t *testing.T) {
	x, dir := newIndex(t, "")
	for _, d := range []string{"a", "b", "c"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "f.go"), []byte("package "+d+"\n\nfunc Old() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := New(dir, x.files, Options{MaxWatchedDirs: 1})
	t.Cleanup(func() { _ = y.Close() })
	if got := searchOK(t, y, "Old", "", 0); got != "a/f.go:3: function a.Old()\nb/f.go:3: function b.Old()\nc/f.go:3: function c.Old()\n(3 matches)" {
		t.Fatalf("first query: %q", got)
	}
	for _, d := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, d, "f.go"), []byte("package "+d+"\n\nfunc New() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := searchOK(t, y, "Old", "", 0); got != `No symbols match "Old"` {
		t.Fatalf("after the change: %q", got)
	}
}
