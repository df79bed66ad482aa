package goedit

import (
	"strings"
	"testing"
)

var pkg = []File{
	{Name: "a.go", Src: []byte(`package a

import "strings"

// Greet greets.
func Greet(name string) string { return "hi " + strings.ToUpper(name) }

type S struct{}

func (s *S) Do(n int) int { return n }

func use() {
	_ = Greet("a")
	f := Greet
	_ = f
	var s S
	_ = s.Do(1)
}
`)},
	{Name: "b.go", Src: []byte(`package a

func more() string {
	return Greet("b") + Greet(string('c'))
}
`)},
	{Name: "a_test.go", Src: []byte(`package a

import "testing"

func TestGreet(t *testing.T) {
	if Greet("x") == "" {
		t.Fatal()
	}
	_ = (*S).Do(nil, 2)
}
`)},
}

func sites(ss []Site) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.String() + "\n")
	}
	return b.String()
}

func TestChangeSignatureReportsCalls(t *testing.T) {
	res, err := ChangeSignatureInPackage(pkg, "a.go", "Greet", "func Greet(greeting, name string) string", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Name != "a.go" || !strings.Contains(string(res.Files[0].Src), "func Greet(greeting, name string) string {") {
		t.Fatalf("files = %+v", res.Files)
	}
	want := `a.go:13:6: Greet("a")  <- not enough arguments in call to Greet
b.go:4:9: Greet("b")  <- not enough arguments in call to Greet
b.go:4:22: Greet(string('c'))  <- not enough arguments in call to Greet
a_test.go:6:5: Greet("x")  <- not enough arguments in call to Greet
`
	if got := sites(res.Calls); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
	if got, want := sites(res.Refs), "a.go:14:7: Greet\n"; got != want {
		t.Errorf("refs = %q, want %q", got, want)
	}
}

func TestChangeSignatureUpdatesCalls(t *testing.T) {
	args := `"hello", $1`
	res, err := ChangeSignatureInPackage(pkg, "a.go", "Greet", "func Greet(greeting, name string) string", &args)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated != 4 || len(res.Files) != 3 || res.Files[0].Name != "a.go" {
		t.Fatalf("updated %d in %d files", res.Updated, len(res.Files))
	}
	if got := string(res.Files[1].Src); !strings.Contains(got, `return Greet("hello", "b") + Greet("hello", string('c'))`) {
		t.Errorf("b.go:\n%s", got)
	}
	want := `a.go:13:6: Greet("hello", "a")
b.go:4:9: Greet("hello", "b")
b.go:4:31: Greet("hello", string('c'))
a_test.go:6:5: Greet("hello", "x")
`
	if got := sites(res.Calls); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}

	// Methods: a method expression is a call it cannot rewrite.
	args = "$1, 0"
	if _, err := ChangeSignatureInPackage(pkg, "a.go", "S.Do", "func (s *S) Do(n, m int) int", &args); err == nil || !strings.Contains(err.Error(), "a_test.go:9:6 calls it as a method expression") {
		t.Errorf("method expression: %v", err)
	}
}

func TestChangeSignatureRefusesBadCallArgs(t *testing.T) {
	for _, tc := range []struct{ args, err string }{
		{`$1); os.Exit(1`, `call_args does not make a call at a.go:13:6: Greet("a"); os.Exit(1)`},
		{`$2`, `call_args uses $2, but the call at a.go:13:6 has 1 arguments`},
		{`$x`, `a $ must be followed by an argument number`},
		{`$0`, `a $ must be followed by an argument number`},
	} {
		args := tc.args
		_, err := ChangeSignatureInPackage(pkg, "a.go", "Greet", "func Greet(name string) string", &args)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("call_args %q: error %v, want %q", tc.args, err, tc.err)
		}
	}
	nest := []File{{Name: "n.go", Src: []byte("package n\n\nfunc F(x int) int { return F(F(x)) }\n")}}
	args := "$1, 0"
	if _, err := ChangeSignatureInPackage(nest, "n.go", "F", "func F(x, y int) int", &args); err == nil || !strings.Contains(err.Error(), "is inside the arguments of the call at n.go:3:28") {
		t.Errorf("nested: %v", err)
	}
	broken := append(pkg[:1:1], File{Name: "c.go", Src: []byte("package a\nfunc {")})
	if _, err := ChangeSignatureInPackage(broken, "a.go", "Greet", "func Greet(name string) string", &args); err == nil || !strings.Contains(err.Error(), "c.go do not parse") {
		t.Errorf("broken sibling: %v", err)
	}
	res, err := ChangeSignatureInPackage(broken, "a.go", "Greet", "func Greet(name string) string", nil)
	if err != nil || len(res.Skipped) != 1 {
		t.Errorf("broken sibling without call_args: %v, %+v", err, res)
	}
}

// TestGenericCallSites: calls of a generic function, explicitly
// instantiated or not, and of a method of a generic type through an
// instantiated receiver are all found.
func TestGenericCallSites(t *testing.T) {
	gen := []File{{Name: "g.go", Src: []byte(`package g

type List[E any] struct{ items []E }

func (l *List[E]) Push(e E) { l.items = append(l.items, e) }

func Map[A, B any](xs []A, f func(A) B) []B { return nil }

func use() {
	var l List[int]
	l.Push(1)
	_ = Map[int, string](nil, nil)
	_ = Map([]int{1}, func(int) string { return "" })
}
`)}}
	args := "$*, 0"
	res, err := ChangeSignatureInPackage(gen, "g.go", "List.Push", "func (l *List[E]) Push(e E, n int)", &args)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sites(res.Calls), "g.go:11:2: l.Push(1, 0)\n"; got != want {
		t.Errorf("Push calls = %q, want %q", got, want)
	}
	res, err = ChangeSignatureInPackage(gen, "g.go", "Map", "func Map[A, B any](xs []A) []B", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "g.go:12:6: Map[int, string](nil, nil)  <- too many arguments in call to Map[int, string]\n" +
		"g.go:13:6: Map([]int{1}, func(int) string { return \"\" })  <- too many arguments in call to Map\n"
	if got := sites(res.Calls); got != want {
		t.Errorf("Map calls:\n%s\nwant:\n%s", got, want)
	}
}

func TestChangeSignatureOfInit(t *testing.T) {
	pkg := []File{{Name: "i.go", Src: []byte("package i\n\nfunc init() {}\n")}}
	args := "$*"
	if res, err := ChangeSignatureInPackage(pkg, "i.go", "init", "func init()", &args); err != nil || res.Updated != 0 {
		t.Errorf("init with call_args: %v, %+v", err, res)
	}
	res, err := ChangeSignatureInPackage(pkg, "i.go", "init", "func init()", nil)
	if err != nil || len(res.Calls) != 0 {
		t.Errorf("init: %v, %+v", err, res)
	}
}
