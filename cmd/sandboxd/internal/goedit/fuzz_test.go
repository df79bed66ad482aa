package goedit

import (
	"go/parser"
	"go/token"
	"testing"
)

// FuzzEdits: whatever the text, an edit fails or leaves a file that
// parses; it never panics.
func FuzzEdits(f *testing.F) {
	for _, s := range []string{
		"return a - b", "{ return 1 }", "return 1 }\nfunc Injected() {", "}", "{", "/*", "`", "return 1 } /* {",
		"func Add(a int) int", "Add(x int)", "func Add() int { return 1 }", "func (t T) Add()", "func Add[T any]()",
		"func (t *T) Set() {}", "func (t *T) Set() {}\nvar x int", "// doc\nfunc (t *T) Set() {}",
	} {
		f.Add("Add", s)
		f.Add("(*T).Get", s)
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		parses := func(out []byte, err error) {
			if err != nil {
				return
			}
			if _, perr := parser.ParseFile(token.NewFileSet(), "out.go", out, 0); perr != nil {
				t.Fatalf("an edit left a file that does not parse: %v\n%s", perr, out)
			}
		}
		parses(EditBody("p.go", []byte(src), name, text))
		parses(ChangeSignature("p.go", []byte(src), name, text))
		parses(InsertAfterMethod("p.go", []byte(src), "T", "Get", text))
	})
}
