package diagram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

func TestNestingIsMeasured(t *testing.T) {
	for _, c := range []struct {
		lang   Language
		source string
		want   int
	}{
		{D2, "a -> b", 1},
		{D2, "a: {b: {c}}", 3},
		{D2, nestedD2(40000), 40000},
		{D2, nestedVarsD2(20), 20},
		{DOT, nestedDOT(20), 20},
		{D2, "a.b.c: x", 3},
		{D2, "a.b: {c.d: {e}}\nx", 5},
		{D2, "a -> b.c.d: {style: {fill: red}}", 3},
		{D2, "a: 1.2.3.4", 1},
		{D2, `a: "{{{{ a.b.c.d"`, 1},
		{D2, "a # {{{{ x.y.z.w\nb", 1},
		{D2, "a: |md\n# {{{{\n{{{{ |\nb", 1},
		{D2, "a: |`md\n| {{{{ `|\nb", 1},
		{D2, "\"\"\"\n{{{{\n\"\"\"\nb", 1},
		{D2, "x: [1; 2]", 2},
		{DOT, "digraph { a -> b [color=red] }", 2},
		{DOT, "digraph { subgraph { subgraph { a } } }", 3},
		{DOT, `digraph { a [label="{{{{"] }`, 2},
		{DOT, "digraph { /* {{{{ */ a // {{{{\n# {{{{\n}", 1},
		{DOT, "digraph { a [label=<<b>{{{{</b>>] }", 2},
	} {
		var got int
		if c.lang == D2 {
			got = nestingD2(c.source)
		} else {
			got = nestingDOT(c.source)
		}
		if got != c.want {
			t.Errorf("%s %q: %d levels, want %d", c.lang, c.source, got, c.want)
		}
	}
}

// nestedD2 is shapes nested n deep.
func nestedD2(n int) string {
	return strings.Repeat("a:{", n-1) + "b" + strings.Repeat("}", n-1)
}

// nestedVarsD2 is a map of variables nested n deep (counting vars), and
// a shape: what the nesting check counts, without the layout cost of as
// many containers.
func nestedVarsD2(n int) string {
	return "vars: {\n" + strings.Repeat("x: {\n", n-2) + "y: 1\n" + strings.Repeat("}\n", n-1) + "a\n"
}

// nestedDOT is a graph whose braces nest n deep.
func nestedDOT(n int) string {
	return "digraph {\n" + strings.Repeat("subgraph {\n", n-1) + "a\n" + strings.Repeat("}\n", n)
}

func TestNestingLimit(t *testing.T) {
	r := New(dotPath(t), self(t), DefaultLimits)
	for _, c := range []struct {
		lang   Language
		source func(int) string
	}{
		{D2, nestedVarsD2},
		{DOT, nestedDOT},
	} {
		if _, err := r.Render(context.Background(), c.lang, SVG, c.source(20)); err != nil {
			t.Errorf("%s at the limit: %v", c.lang, err)
		}
	}
	// Refused before any process starts: a renderer with nothing to
	// start answers with the limit.
	noProcess := New("/nonexistent/dot", "/nonexistent/sandboxd", DefaultLimits)
	for _, c := range []struct {
		lang   Language
		source string
		want   string
	}{
		{D2, nestedVarsD2(21), "diagram nesting (21 levels) over the limit of 20 levels"},
		{D2, nestedD2(21), "diagram nesting (21 levels) over the limit of 20 levels"},
		{D2, strings.Repeat("a.", 20) + "a", "diagram nesting (21 levels) over the limit of 20 levels"},
		{DOT, nestedDOT(21), "diagram nesting (21 levels) over the limit of 20 levels"},
		{D2, nestedD2(40000), "diagram nesting (40000 levels) over the limit of 20 levels"},
	} {
		_, err := noProcess.Render(context.Background(), c.lang, SVG, c.source)
		var le *LimitError
		if !errors.As(err, &le) || err.Error() != c.want {
			t.Errorf("%s past the limit: err = %v, want %q", c.lang, err, c.want)
		}
	}
}

// TestD2DeepSourceIsStoppedInTheChild: with the nesting check lifted, a
// source D2's compiler would spend half a minute on (2000 levels; it
// took 11 minutes over 40000 in sandboxd itself) is compiled in the
// child and stopped at the time limit, or when the call is cancelled,
// leaving no process behind.
func TestD2DeepSourceIsStoppedInTheChild(t *testing.T) {
	lim := DefaultLimits
	lim.Nesting = 1 << 30
	lim.Timeout = renderLimit(2 * time.Second)
	r := New("", self(t), lim)
	deep := nestedD2(2000)
	start := time.Now()
	_, err := r.Render(context.Background(), D2, SVG, deep)
	if err == nil || err.Error() != "d2: diagram render time over the limit of "+lim.Timeout.String() {
		t.Errorf("err = %v, want the time limit", err)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("took %v", took)
	}

	lim.Timeout = time.Minute
	r = New("", self(t), lim)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(renderLimit(time.Second), cancel)
	start = time.Now()
	_, err = r.Render(ctx, D2, SVG, deep)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the cancellation", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to stop", took)
	}
	if left := child.Running(ChildD2); len(left) > 0 {
		t.Errorf("renderers left running: %v", left)
	}
}
