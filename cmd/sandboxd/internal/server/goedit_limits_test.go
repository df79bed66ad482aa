package server

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/goedit"
)

// procStatus is a field of /proc/self/status, in KiB.
func procStatus(t *testing.T, field string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// peakGrowth runs f and returns how far this process's resident memory
// peaked above where it stood, in MiB: the test process is the daemon.
// Tests that call it must not be parallel, so nothing else runs then.
func peakGrowth(t *testing.T, f func()) int {
	t.Helper()
	// Writing 5 resets VmHWM to the current resident size.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak: %v", err)
	}
	before := procStatus(t, "VmHWM")
	f()
	return (procStatus(t, "VmHWM") - before) >> 10
}

// goFileDaemon serves a workspace holding p.go with src, Read in the
// session returned.
func goFileDaemon(t *testing.T, src string) (string, *mcp.ClientSession) {
	t.Helper()
	d := startDaemon(t, Config{})
	if err := os.WriteFile(filepath.Join(d.dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := d.connect(t, streamable)
	ok(t, cs, "Read", map[string]any{"file_path": "p.go"})
	return filepath.Join(d.dir, "p.go"), cs
}

const limitsGo = `package p

type T struct{}

func (T) M() {}

func F() {}

func use() { F() }
`

func nestedBlocks(n int) string { return strings.Repeat("{", n) + strings.Repeat("}", n) }

// TestEditFunctionBodyDeepNestingIsRefusedFast: 60 KB of nested blocks
// (30000 levels), which took gofmt 900 MB and sandboxd 4 GB of memory,
// is refused at once, the daemon's memory untouched; at the limit, 512
// levels, the edit is made.
func TestEditFunctionBodyDeepNestingIsRefusedFast(t *testing.T) {
	file, cs := goFileDaemon(t, limitsGo)
	var got string
	var took time.Duration
	grew := peakGrowth(t, func() {
		start := time.Now()
		got = fails(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": nestedBlocks(30000)})
		took = time.Since(start)
	})
	t.Logf("30000 levels: refused in %v, the daemon's peak grew %d MiB", took, grew)
	if want := "edit_function_body F in p.go: new_body nests 30000 levels deep; the limit is 512"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The old code took 107 s; the check alone takes milliseconds. The
	// bound is loose on purpose (a loaded CI machine under -race): the
	// memory check below is the proof that nothing was parsed.
	if took > 10*time.Second {
		t.Errorf("refused in %v", took)
	}
	if grew > 32 {
		t.Errorf("the daemon's peak memory grew by %d MiB", grew)
	}
	if got := fileText(t, file); got != limitsGo {
		t.Errorf("the file changed:\n%s", got)
	}

	got = fails(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": nestedBlocks(513)})
	if want := "edit_function_body F in p.go: new_body nests 513 levels deep; the limit is 512"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	out := ok(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": nestedBlocks(512)})
	if !strings.HasPrefix(out, "Replaced the body of F in p.go") {
		t.Errorf("at the limit: %s", out)
	}
	if got := fileText(t, file); strings.Count(got, "{") != 512+3 {
		t.Errorf("the file holds %d braces, want the 512 levels and the 3 of the others", strings.Count(got, "{"))
	}
}

// TestGoEditLimitsOverMCP: each structural edit's inputs at their limits
// work and one past them are refused, saying which limit.
func TestGoEditLimitsOverMCP(t *testing.T) {
	t.Parallel()
	parens := func(n int, s string) string { return strings.Repeat("(", n) + s + strings.Repeat(")", n) }
	for _, c := range []struct {
		tool string
		args func(n int) map[string]any
		at   int
		want string
	}{
		{"edit_function_body", func(n int) map[string]any {
			return map[string]any{"function_name": "F", "new_body": "_ = 1" + strings.Repeat("+1", n)}
		}, goedit.MaxChain, "edit_function_body F in p.go: new_body has an expression of 4001 operators; the limit is 4000"},
		{"insert_after_method", func(n int) map[string]any {
			return map[string]any{"receiver_type": "T", "method_name": "M", "new_method": "func (T) N() " + nestedBlocks(n)}
		}, goedit.MaxNesting, "insert_after_method T.M in p.go: new_method nests 513 levels deep; the limit is 512"},
		{"change_function_signature", func(n int) map[string]any {
			return map[string]any{"function_name": "F", "new_signature": "func F(x " + parens(n-1, "int") + ")"}
		}, goedit.MaxNesting, "change_function_signature F in p.go: new_signature nests 513 levels deep; the limit is 512"},
		{"change_function_signature", func(n int) map[string]any {
			return map[string]any{"function_name": "F", "new_signature": "func F(x int)", "call_args": parens(n, "1")}
		}, goedit.MaxNesting, "change_function_signature F in p.go: call_args nests 513 levels deep; the limit is 512"},
	} {
		_, cs := goFileDaemon(t, limitsGo)
		args := c.args(c.at + 1)
		args["file_path"] = "p.go"
		if got := fails(t, cs, c.tool, args); got != c.want {
			t.Errorf("%s past the limit: %q, want %q", c.tool, got, c.want)
		}
		args = c.args(c.at)
		args["file_path"] = "p.go"
		ok(t, cs, c.tool, args)
	}

	// The file's own nesting.
	deep := limitsGo + "\nfunc G() " + nestedBlocks(513) + "\n"
	_, cs := goFileDaemon(t, deep)
	if got, want := fails(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": "return"}), "edit_function_body F in p.go: the file nests 513 levels deep; the limit is 512"; got != want {
		t.Errorf("deep file: %q, want %q", got, want)
	}
}

// TestGoEditRunawayStaysInTheChild: an edit within the input limits
// whose gofmt needs a gigabyte (200 levels deep, 100000 lines: 20 MB of
// tabs) runs out of the child's time or memory; the daemon's own memory
// does not move, nothing is written and no child is left.
func TestGoEditRunawayStaysInTheChild(t *testing.T) {
	saved := goEditLimits
	goEditLimits.Timeout = runawayLimit(3 * time.Second)
	t.Cleanup(func() { goEditLimits = saved })
	file, cs := goFileDaemon(t, limitsGo)
	body := strings.Repeat("{\n", 200) + strings.Repeat("x\n", 100000) + strings.Repeat("}\n", 200)
	var got string
	var took time.Duration
	grew := peakGrowth(t, func() {
		start := time.Now()
		got = fails(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": body})
		took = time.Since(start)
	})
	timeout := "edit_function_body F in p.go: the edit took longer than " + goEditLimits.Timeout.String() + " and was stopped; nothing was written"
	memory := "edit_function_body F in p.go: the edit needed more than 2048 MiB of memory and was stopped; nothing was written"
	t.Logf("runaway: %q in %v, the daemon's peak grew %d MiB", got, took, grew)
	if got != timeout && got != memory {
		t.Errorf("got %q, want %q or %q", got, timeout, memory)
	}
	if took > 8*time.Second {
		t.Errorf("took %v", took)
	}
	if grew > 64 {
		t.Errorf("the daemon's peak memory grew by %d MiB", grew)
	}
	if got := fileText(t, file); got != limitsGo {
		t.Errorf("the file changed")
	}
	if left := child.Running("goedit"); len(left) > 0 {
		t.Errorf("children left: %v", left)
	}
}

// TestChangeFunctionSignaturePackageLimit: a package whose Go files hold
// just the limit is type-checked; one byte more is refused.
func TestChangeFunctionSignaturePackageLimit(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "pkg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"p.go": limitsGo, "q.go": "package p\n\nfunc q() { F() }\n"}
	total := 0
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		total += len(src)
	}
	saved := maxPackageBytes
	t.Cleanup(func() { maxPackageBytes = saved })
	args := map[string]any{"file_path": "pkg/p.go", "function_name": "F", "new_signature": "func F()"}
	session := func(limit int) *mcp.ClientSession {
		maxPackageBytes = limit
		cs := startDaemon(t, Config{Workspaces: []Workspace{{Dir: ws}}}).connect(t, streamable)
		ok(t, cs, "Read", map[string]any{"file_path": "pkg/p.go"})
		return cs
	}

	got := fails(t, session(total-1), "change_function_signature", args)
	if want := "change_function_signature: the package's Go files in pkg hold over " + strconv.Itoa(total-1) + " bytes, the limit"; got != want {
		t.Errorf("past the limit: %q, want %q", got, want)
	}
	if out := ok(t, session(total), "change_function_signature", args); !strings.HasPrefix(out, "Changed the signature of F in pkg/p.go\n2 calls in the package") {
		t.Errorf("at the limit: %s", out)
	}
}
