package verify

import (
	"slices"
	"testing"
)

func TestRunPattern(t *testing.T) {
	cases := []struct {
		names []string
		want  string
	}{
		{[]string{"TestA"}, "^TestA$"},
		{[]string{"TestB", "TestA", "TestA"}, "^TestA$|^TestB$"},
		{[]string{"TestA", "TestA/sub_case_(x+y)", "TestA-x"}, `^TestA-x$|^TestA$/^sub_case_\(x\+y\)$`},
		{[]string{"TestA/x/deep", "TestA/x", "TestA", "TestA/y|z"}, `^TestA$/^x$/^deep$|^TestA$/^y\|z$`},
		{[]string{"Test[1]"}, `^Test\[1\]$`},
	}
	for _, c := range cases {
		if got := RunPattern(c.names); got != c.want {
			t.Errorf("RunPattern(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

func TestRunPatternsSplitLongOnes(t *testing.T) {
	got := runPatterns([]string{"TestA", "TestB", "TestC", "TestLonger"}, 16)
	want := []string{"^TestA$|^TestB$", "^TestC$", "^TestLonger$"}
	if !slices.Equal(got, want) {
		t.Fatalf("runPatterns = %q, want %q", got, want)
	}
}
