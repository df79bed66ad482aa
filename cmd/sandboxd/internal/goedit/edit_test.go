package goedit

import (
	"errors"
	"strings"
	"testing"
)

const src = `package p

import "fmt"

// Add adds.
func Add(a, b int) int {
	return a + b // sum
}

// T is a thing.
type T struct{ n int }

// Get gets.
func (t *T) Get() int { return t.n } // trailing

func (t T) String() string { return fmt.Sprint(t.n) }

// List is generic.
type List[E any] struct{ items []E }

func (l *List[E]) Push(e E) { l.items = append(l.items, e) }

func Map[A, B any](xs []A, f func(A) B) []B { return nil }

//go:noescape
func asm(x int) int

func init() {}

func init() {}
`

func TestEditBody(t *testing.T) {
	for _, tc := range []struct {
		name, fn, body string
		want           string // a substring of the result
		err            string // a substring of the error
	}{
		{name: "statements", fn: "Add", body: "return a - b", want: "func Add(a, b int) int {\n\treturn a - b\n}\n"},
		{name: "with braces", fn: "Add", body: "{ return b + a }", want: "func Add(a, b int) int { return b + a }\n"},
		{name: "nested block alone", fn: "Add", body: "{ x := a }\nreturn b", want: "\t{\n\t\tx := a\n\t}\n\treturn b\n"},
		{name: "pointer method", fn: "(*T).Get", body: "return t.n + 1", want: "func (t *T) Get() int {\n\treturn t.n + 1\n} // trailing\n"},
		{name: "dotted method", fn: "T.String", body: "return \"t\"", want: "func (t T) String() string {\n\treturn \"t\"\n}"},
		{name: "method by bare name", fn: "Get", body: "return 0", want: "func (t *T) Get() int {\n\treturn 0\n}"},
		{name: "generic method", fn: "List.Push", body: "l.items = nil", want: "func (l *List[E]) Push(e E) {\n\tl.items = nil\n}"},
		{name: "generic function", fn: "Map", body: "return make([]B, len(xs))", want: "func Map[A, B any](xs []A, f func(A) B) []B {\n\treturn make([]B, len(xs))\n}"},
		{name: "raw string with a brace", fn: "Add", body: "_ = `\n}\nfunc X() {`\nreturn 0", want: "_ = `\n}\nfunc X() {`\n"},

		{name: "injected function", fn: "Add", body: "return 1 }\nfunc Injected() {", err: "not one function body: it ends the body and goes on with another declaration (func Injected)"},
		{name: "injected var", fn: "Add", body: "return 1 }\nvar x = func() {", err: "another declaration (var)"},
		{name: "braces then more", fn: "Add", body: "{ return 1 }\nfunc Injected() { }", err: "new_body does not parse"},
		{name: "unclosed comment", fn: "Add", body: "return 1 /*", err: "new_body does not parse"},
		{name: "unbalanced", fn: "Add", body: "return 1 }", err: "new_body does not parse"},
		{name: "empty", fn: "Add", body: "  \n", err: "new_body is empty"},
		{name: "huge", fn: "Add", body: strings.Repeat("x", MaxFragmentBytes+1), err: "over the"},
		{name: "bodiless", fn: "asm", body: "return x", err: "asm (line 26) is declared without a body"},
		{name: "missing", fn: "Sub", body: "return 0", err: `no function "Sub" in the file; it declares Add (line 6), (*T).Get (line 14), T.String (line 16), (*List).Push (line 21), Map (line 23), asm (line 26), init (line 28), init (line 30)`},
		{name: "ambiguous", fn: "init", body: "", err: `"init" is ambiguous: it names init (line 28), init (line 30)`},
		{name: "wrong receiver", fn: "List.Get", body: "return 0", err: `no function "List.Get"`},
		{name: "bad name", fn: "a b", body: "return 0", err: `want Name, Type.Method or (*Type).Method`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := EditBody("p.go", []byte(src), tc.fn, tc.body)
			check(t, string(out), err, tc.want, tc.err)
		})
	}
}

func check(t *testing.T, out string, err error, want, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("error: %v", err)
	}
	if !strings.Contains(out, want) {
		t.Fatalf("result:\n%s\nwant it to contain:\n%s", out, want)
	}
}

func TestEditRefusesBrokenFiles(t *testing.T) {
	_, err := EditBody("bad.go", []byte("package p\nfunc F() { return 1 \n"), "F", "return 2")
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "the file does not parse: bad.go:2:22: expected '}', found 'EOF'") {
		t.Fatalf("error = %v, want the file's syntax error", err)
	}
	_, err = EditBody("x.go", []byte("not go at all"), "F", "return 2")
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a SyntaxError", err)
	}
	_, err = EditBody("big.go", []byte("package p\n//"+strings.Repeat("x", MaxFileBytes)), "F", "return 2")
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("error = %v, want the size refused", err)
	}
	_, err = EditBody("empty.go", []byte("package p\n"), "F", "return 2")
	if !errors.Is(err, errNoFuncs) {
		t.Fatalf("error = %v, want errNoFuncs", err)
	}
}

func TestInsertAfterMethod(t *testing.T) {
	for _, tc := range []struct {
		name, recv, method, decl string
		want, err                string
	}{
		{name: "after a trailing comment", recv: "T", method: "Get", decl: "// Set sets.\nfunc (t *T) Set(n int) { t.n = n }",
			want: "func (t *T) Get() int { return t.n } // trailing\n\n// Set sets.\nfunc (t *T) Set(n int) { t.n = n }\n\nfunc (t T) String()"},
		{name: "generic receiver", recv: "List", method: "Push", decl: "func (l *List[E]) Len() int { return len(l.items) }",
			want: "func (l *List[E]) Push(e E) { l.items = append(l.items, e) }\n\nfunc (l *List[E]) Len() int { return len(l.items) }\n"},

		{name: "two methods", recv: "T", method: "Get", decl: "func (t *T) A() {}\nfunc (t *T) B() {}", err: "exactly one method declaration; it holds 2"},
		{name: "injected after body", recv: "T", method: "Get", decl: "func (t *T) A() {}\nvar x = 1", err: "exactly one method declaration; it holds 2"},
		{name: "import", recv: "T", method: "Get", decl: "import \"os\"\nfunc (t *T) A() {}", err: "exactly one method declaration"},
		{name: "function", recv: "T", method: "Get", decl: "func A() {}", err: "declares func A without a receiver; give it one of type T"},
		{name: "other receiver", recv: "T", method: "Get", decl: "func (l *List[E]) A() {}", err: "receiver is of type *List[E], not T"},
		{name: "type decl", recv: "T", method: "Get", decl: "type U int", err: "not a type declaration"},
		{name: "no body", recv: "T", method: "Get", decl: "func (t *T) A()", err: "has no body"},
		{name: "duplicate", recv: "T", method: "Get", decl: "func (t T) String() string { return \"\" }", err: "T already has a method String (line 16)"},
		{name: "no anchor", recv: "T", method: "Put", decl: "func (t *T) A() {}", err: `no function "T.Put"`},
		{name: "anchor is a function", recv: "Add", method: "Add", decl: "func (t *T) A() {}", err: `no function "Add.Add"`},
		{name: "star receiver type", recv: "*T", method: "Get", decl: "func (t *T) A() {}", err: "want a type name"},
		{name: "syntax error", recv: "T", method: "Get", decl: "func (t *T) A() {", err: "new_method does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := InsertAfterMethod("p.go", []byte(src), tc.recv, tc.method, tc.decl)
			check(t, string(out), err, tc.want, tc.err)
		})
	}
}

func TestChangeSignature(t *testing.T) {
	for _, tc := range []struct {
		name, fn, sig string
		want, err     string
	}{
		{name: "params", fn: "Add", sig: "func Add(a, b, c int) int", want: "// Add adds.\nfunc Add(a, b, c int) int {\n\treturn a + b // sum\n}"},
		{name: "without func", fn: "Add", sig: "Add(a, b int) (int, error)", want: "func Add(a, b int) (int, error) {"},
		{name: "receiver may change pointerness", fn: "T.String", sig: "func (t *T) String() string", want: "func (t *T) String() string { return fmt.Sprint(t.n) }"},
		{name: "bodiless", fn: "asm", sig: "func asm(x, y int) int", want: "//go:noescape\nfunc asm(x, y int) int\n"},
		{name: "generic", fn: "Map", sig: "func Map[A any, B comparable](xs []A, f func(A) B) []B", want: "func Map[A any, B comparable](xs []A, f func(A) B) []B { return nil }"},

		{name: "with body", fn: "Add", sig: "func Add() int { return 1 }", err: "new_signature has a body"},
		{name: "injected decl", fn: "Add", sig: "func Add() int\nfunc Injected()", err: "one function signature; it holds 2"},
		{name: "injected via brace", fn: "Add", sig: "func Add() int {}\nfunc Injected() {", err: "new_signature does not parse"},
		{name: "comment", fn: "Add", sig: "func Add() int // hi", err: "holds a comment"},
		{name: "rename", fn: "Add", sig: "func Plus(a, b int) int", err: "names Plus, not Add; to rename, use rename_symbol"},
		{name: "adds receiver", fn: "Add", sig: "func (t T) Add(a, b int) int", err: "Add is a function; new_signature gives it a receiver"},
		{name: "drops receiver", fn: "(*T).Get", sig: "func Get() int", err: "Get is a method of T; new_signature drops the receiver"},
		{name: "moves receiver", fn: "(*T).Get", sig: "func (l *List[E]) Get() int", err: "moves it to List"},
		{name: "not a func", fn: "Add", sig: "var Add int", err: "new_signature does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ChangeSignature("p.go", []byte(src), tc.fn, tc.sig)
			check(t, string(out), err, tc.want, tc.err)
		})
	}
}
