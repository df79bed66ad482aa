package goedit

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// TestMain lets the test binary be the child Isolated starts, as
// sandboxd is.
func TestMain(m *testing.M) {
	child.Serve()
	os.Exit(m.Run())
}

func TestShapeIsMeasured(t *testing.T) {
	for _, c := range []struct {
		src          string
		depth, chain int
	}{
		{"x := 1", 0, 0},
		{"f(g(h[i]{}))", 3, 1},
		{"a + b*c - d", 0, 3},
		{"a.b.c.d()", 1, 3},
		{"f()()()", 1, 2},
		{"x := a + b; y := c + d", 0, 1},
		{"f(a+b, c+d+e)", 1, 2},
		{"!!!!x", 0, 4},
		{"var c chan chan chan int", 0, 3},
		{`s := "((((+++"; t := '{'`, 0, 0},
		{"/* (((( +++ */ x // {{{{", 0, 0},
		{"`\n{{{{\n`", 0, 0},
		{"$1, $*", 0, 1},
	} {
		depth, chain := shape([]byte(c.src))
		if depth != c.depth || chain != c.chain {
			t.Errorf("%q: depth %d, chain %d; want %d, %d", c.src, depth, chain, c.depth, c.chain)
		}
	}
}

// pad is s with x's after it to n bytes.
func pad(s string, n int) string { return s + strings.Repeat("x", n-len(s)) }

// nestedBlocks is a body of blocks nested n deep.
func nestedBlocks(n int) string { return strings.Repeat("{", n) + strings.Repeat("}", n) }

// sum is an expression of n operators.
func sum(n int) string { return "_ = 1" + strings.Repeat("+1", n) }

// nestedParens is text in n parentheses.
func nestedParens(n int, text string) string {
	return strings.Repeat("(", n) + text + strings.Repeat(")", n)
}

// limitCases are, for each tool's input, an edit at the limit (ok) and
// one just past it (refused with want).
var limitCases = []struct {
	name string
	edit func(n int) editCall
	at   int    // the limit: edit(at) succeeds
	want string // edit(at+1)'s error
}{
	{"body size", func(n int) editCall { return editBody(limitsSrc, "F", pad("return //", n)) }, MaxFragmentBytes,
		"new_body is 262145 bytes, over the 262144 allowed"},
	{"file size", func(n int) editCall { return editBody(pad(limitsSrc+"//", n), "F", "return") }, MaxFileBytes,
		"the file is 4194305 bytes, over the 4194304 allowed"},
	{"method size", func(n int) editCall {
		return editCall{"method", func(ctx context.Context, x *Isolated) error {
			decl := pad("func (T) N() {} //", n)
			if x == nil {
				_, err := InsertAfterMethod("p.go", []byte(limitsSrc), "T", "M", decl)
				return err
			}
			_, err := x.InsertAfterMethod(ctx, "p.go", []byte(limitsSrc), "T", "M", decl)
			return err
		}}
	}, MaxFragmentBytes, "new_method is 262145 bytes, over the 262144 allowed"},
	{"signature size", func(n int) editCall {
		return changeSignature("func F()"+strings.Repeat(" ", n-len("func F()")), nil)
	}, MaxFragmentBytes, "new_signature is 262145 bytes, over the 262144 allowed"},
	{"call_args size", func(n int) editCall {
		args := strings.Repeat(" ", n)
		return changeSignature("func F()", &args)
	}, MaxFragmentBytes, "call_args is 262145 bytes, over the 262144 allowed"},
	{"body nesting", func(n int) editCall { return editBody(limitsSrc, "F", nestedBlocks(n)) }, MaxNesting,
		"new_body nests 513 levels deep; the limit is 512"},
	{"body chain", func(n int) editCall { return editBody(limitsSrc, "F", sum(n)) }, MaxChain,
		"new_body has an expression of 4001 operators; the limit is 4000"},
	{"file nesting", func(n int) editCall {
		return editBody(limitsSrc+"\nfunc G() "+nestedBlocks(n)+"\n", "F", "return")
	}, MaxNesting, "the file nests 513 levels deep; the limit is 512"},
	{"file chain", func(n int) editCall {
		return editBody(limitsSrc+"\nvar x = 1"+strings.Repeat("+1", n)+"\n", "F", "return")
	}, MaxChain, "the file has an expression of 4001 operators; the limit is 4000"},
	{"method nesting", func(n int) editCall {
		return editCall{"method", func(ctx context.Context, x *Isolated) error {
			decl := "func (T) N() " + nestedBlocks(n)
			if x == nil {
				_, err := InsertAfterMethod("p.go", []byte(limitsSrc), "T", "M", decl)
				return err
			}
			_, err := x.InsertAfterMethod(ctx, "p.go", []byte(limitsSrc), "T", "M", decl)
			return err
		}}
	}, MaxNesting, "new_method nests 513 levels deep; the limit is 512"},
	{"signature nesting", func(n int) editCall {
		return changeSignature("func F(x "+nestedParens(n-1, "int")+")", nil)
	}, MaxNesting, "new_signature nests 513 levels deep; the limit is 512"},
	{"call_args nesting", func(n int) editCall {
		args := nestedParens(n, "1")
		return changeSignature("func F(x int)", &args)
	}, MaxNesting, "call_args nests 513 levels deep; the limit is 512"},
}

const limitsSrc = `package p

type T struct{}

func (T) M() {}

func F() {}

func use() { F() }
`

// editCall is one edit, made in this process (x nil) or by x.
type editCall struct {
	what string
	do   func(ctx context.Context, x *Isolated) error
}

func editBody(src, fn, body string) editCall {
	return editCall{"body", func(ctx context.Context, x *Isolated) error {
		if x == nil {
			_, err := EditBody("p.go", []byte(src), fn, body)
			return err
		}
		_, err := x.EditBody(ctx, "p.go", []byte(src), fn, body)
		return err
	}}
}

func changeSignature(sig string, callArgs *string) editCall {
	return editCall{"signature", func(ctx context.Context, x *Isolated) error {
		pkg := []File{{Name: "p.go", Src: []byte(limitsSrc)}}
		if x == nil {
			_, err := ChangeSignatureInPackage(pkg, "p.go", "F", sig, callArgs)
			return err
		}
		_, err := x.ChangeSignatureInPackage(ctx, pkg, "p.go", "F", sig, callArgs)
		return err
	}}
}

// TestLimitsAtAndPast: every input of every edit works at its limit and
// is refused one past it, with the same message in this process and
// through Isolated, which refuses before it starts a child: given no
// executable to start, it still answers with the limit.
func TestLimitsAtAndPast(t *testing.T) {
	x := &Isolated{Self: child.Executable(), Limits: DefaultLimits}
	noChild := &Isolated{Self: "/nonexistent/sandboxd", Limits: DefaultLimits}
	for _, c := range limitCases {
		for _, in := range [][2]*Isolated{{nil, nil}, {x, noChild}} {
			where := "in process"
			if in[0] != nil {
				where = "isolated"
			}
			if err := c.edit(c.at).do(context.Background(), in[0]); err != nil {
				t.Errorf("%s at the limit, %s: %v", c.name, where, err)
			}
			err := c.edit(c.at+1).do(context.Background(), in[1])
			if err == nil || err.Error() != c.want {
				t.Errorf("%s past the limit, %s: err = %v, want %q", c.name, where, err, c.want)
			}
		}
	}
}

// TestIsolatedRunawayIsStopped: an edit within the input limits that
// costs more than the child may spend (gofmt indents each of 60000 lines
// 500 levels deep: 30 MB of tabs, then the file's check) is stopped, by
// its time or its memory limit.
func TestIsolatedRunawayIsStopped(t *testing.T) {
	lim := DefaultLimits
	lim.Timeout = time.Second
	x := Isolated{Self: child.Executable(), Limits: lim}
	body := strings.Repeat("{\n", 500) + strings.Repeat("x()\n", 60000) + strings.Repeat("}\n", 500)
	start := time.Now()
	_, err := x.EditBody(context.Background(), "p.go", []byte(limitsSrc), "F", body)
	// Which limit it meets first depends on the machine (and -race):
	// either stops it.
	timeout := "the edit took longer than 1s and was stopped; nothing was written"
	memory := "the edit needed more than 2048 MiB of memory and was stopped; nothing was written"
	if err == nil || (err.Error() != timeout && err.Error() != memory) {
		t.Errorf("err = %v, want %q or %q", err, timeout, memory)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if left := child.Running(childEdit); len(left) > 0 {
		t.Errorf("children left: %v", left)
	}
}
