package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// needCtags skips when universal-ctags is absent, unless CI is set.
func needCtags(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("ctags"); err != nil {
		ci.Skip(t, "ctags is not installed, which search_code needs (apt-get install -y universal-ctags)")
	}
}

// pollSearch calls search_code until its answer is want or a second has
// passed, and returns the last answer.
func pollSearch(t *testing.T, call func() string, want string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		got := call()
		if got == want || time.Since(start) > time.Second {
			return got, time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSearchCodeFollowsWrites: over MCP, a symbol a Write adds is found
// within a second, and once Bash removes the file it is not.
func TestSearchCodeFollowsWrites(t *testing.T) {
	needCtags(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../symbols/testdata/polyglot")); err != nil {
		t.Fatal(err)
	}
	// No diagnostics: tsc on the Write's TypeScript would take seconds,
	// and what is tested here is the index.
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, DiagnosticsTimeout: -1})
	cs := d.connect(t, streamable)
	search := func(args map[string]any) func() string {
		return func() string { return ok(t, cs, "search_code", args) }
	}
	fresh := map[string]any{"query": "brandNewHelper"}
	if got := search(fresh)(); got != `No symbols match "brandNewHelper"` {
		t.Fatalf("before the Write: %q", got)
	}
	ok(t, cs, "Write", map[string]any{"file_path": "lib/helper.ts", "content": "export function brandNewHelper(n: number): number {\n  return n;\n}\n"})
	want := "lib/helper.ts:1: function brandNewHelper\n(1 match)"
	if got, took := pollSearch(t, search(fresh), want); got != want {
		t.Fatalf("after the Write (%s):\n%s\nwant\n%s", took, got, want)
	} else {
		t.Logf("found %s after the Write", took)
	}
	ok(t, cs, "Bash", map[string]any{"command": "rm lib/helper.ts"})
	want = `No symbols match "brandNewHelper"`
	if got, took := pollSearch(t, search(fresh), want); got != want {
		t.Fatalf("after rm (%s): %q", took, got)
	}

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "area", "kind": "method"}, "shapes.go:5: method shapes.Shape.Area()\nshapes.go:14: method shapes.Square.Area()\nshapes.py:2: method Circle.circle_area(self, scale)\nshapes.ts:6: method Triangle.triangleArea\n(4 matches) [kind method]"},
		{map[string]any{"query": "cube", "kind": "type"}, "shapes.rs:5: struct Cube\n(1 match) [kind type]"},
		{map[string]any{"query": "make", "limit": 1}, "shapes.rs:15: function make_cube(edge: f64) -> Cube\n(showing 1 of 3 matches; narrow the query or filter by kind)"},
	} {
		if got := ok(t, cs, "search_code", c.args); got != c.want {
			t.Errorf("search_code(%v):\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	if got := fails(t, cs, "search_code", map[string]any{"query": "x", "kind": "widget"}); !strings.Contains(got, `unknown kind "widget"`) {
		t.Errorf("bad kind: %q", got)
	}
}

// TestSearchCodeReadOnly: a read-only server offers search_code, and its
// index skips what .gitignore hides.
func TestSearchCodeReadOnly(t *testing.T) {
	needCtags(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":     "gen/\n",
		"app/main.go":    "package main\n\nfunc visibleFunc() {}\n",
		"gen/out.go":     "package gen\n\nfunc visibleFuncGenerated() {}\n",
		"app/secret.env": "x",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, ReadOnly: true})
	cs := d.connect(t, streamable)
	if got, want := ok(t, cs, "search_code", map[string]any{"query": "visiblefunc"}), "app/main.go:3: function main.visibleFunc()\n(1 match)"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkSearchCode queries a warm index of GOROOT/src (a read-only
// workspace) over MCP; first-build-s is how long the first query, which
// builds the index, took.
//
//	go test -run '^$' -bench SearchCode -count 5 ./cmd/sandboxd/internal/server/
func BenchmarkSearchCode(b *testing.B) {
	needCtags(b)
	d := startDaemon(b, Config{Workspaces: []Workspace{{Dir: gorootSrc(b)}}, ReadOnly: true})
	cs := d.connect(b, streamable)
	args := map[string]any{"query": "NewReader", "kind": "function"}
	start := time.Now()
	ok(b, cs, "search_code", args)
	build := time.Since(start)
	for b.Loop() {
		if out := ok(b, cs, "search_code", args); !strings.Contains(out, "bufio/bufio.go:") {
			b.Fatalf("%.300s", out)
		}
	}
	b.ReportMetric(build.Seconds(), "first-build-s")
}
