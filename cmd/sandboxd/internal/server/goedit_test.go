package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goEditDaemon serves a copy of testdata/goedit with go vet for the
// diagnostics.
func goEditDaemon(t *testing.T) (string, *mcp.ClientSession) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/goedit")); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: diagEnv(t, ""), DiagnosticsTimeout: time.Minute})
	return dir, d.connect(t, streamable)
}

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEditFunctionBodyOverMCP: the body is replaced and gofmt'd, the
// diagnostics of Edit follow, and every refusal leaves the file as it
// was: an injected declaration, a bodiless function, a file not read or
// changed since, a non-Go file, a path outside the workspace.
func TestEditFunctionBodyOverMCP(t *testing.T) {
	t.Parallel()
	dir, cs := goEditDaemon(t)
	file := filepath.Join(dir, "shapes", "shapes.go")
	orig := fileText(t, file)

	args := map[string]any{"file_path": "shapes/shapes.go", "function_name": "Rect.Area", "new_body": "return r.W*r.H + 0"}
	if got := fails(t, cs, "edit_function_body", args); !strings.Contains(got, "file has not been read in this session; Read it first") {
		t.Errorf("unread file: %s", got)
	}
	ok(t, cs, "Read", map[string]any{"file_path": "shapes/shapes.go"})

	out := ok(t, cs, "edit_function_body", args)
	if want := "Replaced the body of Rect.Area in shapes/shapes.go\n\nDiagnostics (go vet): no problems found"; out != want {
		t.Errorf("result:\n%s\nwant:\n%s", out, want)
	}
	want := strings.Replace(orig, "\treturn r.W * r.H\n", "\treturn r.W*r.H + 0\n", 1)
	if got := fileText(t, file); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}

	// The ledger knows the new content: a second edit needs no Read.
	out = ok(t, cs, "edit_function_body", map[string]any{"file_path": "shapes/shapes.go", "function_name": "Square", "new_body": "{ return Rect{W: n} }"})
	if want := "Diagnostics (go vet): no problems found"; diagnostics(out) != want {
		t.Errorf("result:\n%s", out)
	}
	out = ok(t, cs, "edit_function_body", map[string]any{"file_path": "shapes/shapes.go", "function_name": "(*Rect).Scale", "new_body": "r.W = \"wide\""})
	if want := "Diagnostics (go vet, go build): 1 finding\nshapes/shapes.go:14:8: compile: cannot use \"wide\" (untyped string constant) as int value in assignment"; diagnostics(out) != want {
		t.Errorf("result:\n%s\nwant diagnostics:\n%s", out, want)
	}
	current := fileText(t, file)

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"function_name": "Square", "new_body": "return Rect{}\n}\n\nfunc Injected() {"}, "new_body is not one function body: it ends the body and goes on with another declaration (func Injected)"},
		{map[string]any{"function_name": "Square", "new_body": "return Rect{} /*"}, "new_body does not parse"},
		{map[string]any{"function_name": "Circle", "new_body": "return 0"}, `no function "Circle" in the file; it declares Rect.Area (line 8), (*Rect).Scale (line 13), Square (line 18)`},
		{map[string]any{"file_path": "shapes/clock.go", "function_name": "nanotime", "new_body": "return 0"}, "nanotime (line 8) is declared without a body"},
		{map[string]any{"file_path": "go.mod", "function_name": "x", "new_body": "return"}, `"go.mod" is not a Go file (.go); use Edit`},
		{map[string]any{"file_path": "../outside.go", "function_name": "x", "new_body": "return"}, "outside the workspace"},
		{map[string]any{"file_path": "shapes/use.go", "function_name": "Board", "new_body": "return 0"}, "file has not been read in this session"},
	} {
		a := map[string]any{"file_path": "shapes/shapes.go"}
		for k, v := range tc.args {
			a[k] = v
		}
		if a["file_path"] == "shapes/clock.go" {
			ok(t, cs, "Read", map[string]any{"file_path": "shapes/clock.go"})
		}
		if got := fails(t, cs, "edit_function_body", a); !strings.Contains(got, tc.want) {
			t.Errorf("edit_function_body(%v) = %q, want %q in it", tc.args, got, tc.want)
		}
	}
	if got := fileText(t, file); got != current {
		t.Errorf("a refused edit changed the file:\n%s", got)
	}

	// A file changed behind the session's back must be read again.
	if err := os.WriteFile(file, []byte(current+"\n// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := fails(t, cs, "edit_function_body", args); !strings.Contains(got, "file changed since it was read; Read it again") {
		t.Errorf("stale file: %s", got)
	}
	// A symlink out of the workspace is outside it too.
	outside := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(outside, []byte("package x\n\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if got := fails(t, cs, "edit_function_body", map[string]any{"file_path": "link.go", "function_name": "F", "new_body": "panic(1)"}); !strings.Contains(got, "outside the workspace") {
		t.Errorf("symlink out: %s", got)
	}
}

// TestInsertAfterMethodOverMCP: the method lands after its anchor and
// the package builds; a second method of the name is refused.
func TestInsertAfterMethodOverMCP(t *testing.T) {
	t.Parallel()
	dir, cs := goEditDaemon(t)
	file := filepath.Join(dir, "shapes", "shapes.go")
	orig := fileText(t, file)
	ok(t, cs, "Read", map[string]any{"file_path": "shapes/shapes.go"})
	method := "// Perimeter is the length of the rectangle's border.\nfunc (r Rect) Perimeter() int { return 2 * (r.W + r.H) }"
	out := ok(t, cs, "insert_after_method", map[string]any{"file_path": "shapes/shapes.go", "receiver_type": "Rect", "method_name": "Area", "new_method": method})
	if want := "Inserted a method after Rect.Area in shapes/shapes.go\n\nDiagnostics (go vet): no problems found"; out != want {
		t.Errorf("result:\n%s", out)
	}
	want := strings.Replace(orig, "\treturn r.W * r.H\n}\n", "\treturn r.W * r.H\n}\n\n"+method+"\n", 1)
	if got := fileText(t, file); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	for _, tc := range []struct{ method, want string }{
		{method, "Rect already has a method Perimeter (line 13)"},
		{"func (r Rect) A() int { return 0 }\nfunc Injected() {}", "new_method must be exactly one method declaration; it holds 2 declarations"},
		{"func A() int { return 0 }", "declares func A without a receiver; give it one of type Rect"},
	} {
		if got := fails(t, cs, "insert_after_method", map[string]any{"file_path": "shapes/shapes.go", "receiver_type": "Rect", "method_name": "Area", "new_method": tc.method}); !strings.Contains(got, tc.want) {
			t.Errorf("insert_after_method(%q) = %q, want %q in it", tc.method, got, tc.want)
		}
	}
}

// TestChangeFunctionSignatureOverMCP: without call_args the calls that
// no longer type-check are listed and go vet reports them too; with
// call_args every call in the package, tests included, is rewritten
// and the package builds again.
func TestChangeFunctionSignatureOverMCP(t *testing.T) {
	t.Parallel()
	dir, cs := goEditDaemon(t)
	ok(t, cs, "Read", map[string]any{"file_path": "shapes/shapes.go"})

	out := ok(t, cs, "change_function_signature", map[string]any{"file_path": "shapes/shapes.go", "function_name": "Square", "new_signature": "func Square(n, m int) Rect"})
	head := "Changed the signature of Square in shapes/shapes.go\n" +
		"3 calls in the package, 3 with a type error:\n" +
		"shapes/shapes_test.go:6:12: Square(2)  <- not enough arguments in call to Square\n" +
		"shapes/use.go:5:9: Square(n)  <- not enough arguments in call to Square\n" +
		"shapes/use.go:5:28: Square(n+1)  <- not enough arguments in call to Square\n\n" +
		"Diagnostics (go vet, go build): "
	if !strings.HasPrefix(out, head) || !strings.Contains(out, "shapes/use.go:5:16: compile: not enough arguments in call to Square") {
		t.Errorf("result:\n%s\nwant it to start with:\n%s", out, head)
	}

	out = ok(t, cs, "change_function_signature", map[string]any{"file_path": "shapes/shapes.go", "function_name": "Square", "new_signature": "Square(n int, name string) Rect", "call_args": "$1, \"sq\""})
	want := "Changed the signature of Square in shapes/shapes.go; updated 3 calls in 3 files\n" +
		"3 calls in the package, 0 with a type error:\n" +
		"shapes/shapes_test.go:6:12: Square(2, \"sq\")\n" +
		"shapes/use.go:5:9: Square(n, \"sq\")\n" +
		"shapes/use.go:5:34: Square(n+1, \"sq\")\n\n" +
		"Diagnostics (go vet): no problems found"
	if out != want {
		t.Errorf("result:\n%s\nwant:\n%s", out, want)
	}
	if got, want := fileText(t, filepath.Join(dir, "shapes", "use.go")), "\treturn Square(n, \"sq\").Area() + Square(n+1, \"sq\").Area()\n"; !strings.Contains(got, want) {
		t.Errorf("use.go:\n%s", got)
	}
	if got := fails(t, cs, "change_function_signature", map[string]any{"file_path": "shapes/shapes.go", "function_name": "Square", "new_signature": "func Cube(n int) Rect"}); !strings.Contains(got, "new_signature names Cube, not Square; to rename, use rename_symbol") {
		t.Errorf("rename: %s", got)
	}
	if got := fails(t, cs, "change_function_signature", map[string]any{"file_path": "shapes/shapes.go", "function_name": "Square", "new_signature": "func Square(n int) Rect", "call_args": "$1); panic(0"}); !strings.Contains(got, "call_args does not make a call at") {
		t.Errorf("injected call_args: %s", got)
	}
}
