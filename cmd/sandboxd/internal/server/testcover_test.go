package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTestsCoveringOverMCP: on a package whose tests run different
// functions, a line is covered by exactly the tests that ran it (not by
// every test, as a profile listing every block would say), the summary
// by function says the same, a second call is served from the cache, and
// a change to a .go file of the package computes it again.
func TestTestsCoveringOverMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../testcover/testdata/calc")); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: diagEnv(t, "")})
	cs := d.connect(t, streamable)

	computed := regexp.MustCompile(`\nCoverage: computed now in [0-9.]+m?s, 3 test runs; cached until a \.go file of the package changes$`)
	cached := regexp.MustCompile(`\nCoverage: from the cache \(computed in [0-9.]+m?s; kept until a \.go file of the package changes\)$`)

	out := ok(t, cs, "tests_covering", map[string]any{"file_path": "calc.go", "line": 13})
	if got, want := firstLine(out), "calc.go:13 is run by 1 of the package's 3 tests: TestAbs"; got != want || !computed.MatchString(out) {
		t.Errorf("first call:\n%s\nwant %q, computed now", out, want)
	}
	for line, want := range map[int]string{
		7:  "calc.go:7 is run by 1 of the package's 3 tests: TestAdd",
		12: "calc.go:12 is run by 2 of the package's 3 tests: TestAbs, TestAbsPositive",
		15: "calc.go:15 is run by 1 of the package's 3 tests: TestAbsPositive",
		20: "calc.go:20 is run by none of the package's 3 tests",
	} {
		start := time.Now()
		out := ok(t, cs, "tests_covering", map[string]any{"file_path": "calc.go", "line": line})
		if got := firstLine(out); got != want || !cached.MatchString(out) {
			t.Errorf("line %d:\n%s\nwant %q, from the cache", line, out, want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("a cached answer took %s", took)
		}
	}

	out = ok(t, cs, "tests_covering", map[string]any{"file_path": "calc.go"})
	want := "Tests of the package (3 tests) covering calc.go, by function:\n" +
		"Add (lines 6-8): TestAdd\n" +
		"Abs (lines 11-16): TestAbs, TestAbsPositive\n" +
		"Unused (lines 19-21): none\n"
	if !strings.HasPrefix(out, want) || !cached.MatchString(out) {
		t.Errorf("summary:\n%s\nwant:\n%s", out, want)
	}

	// TestAdd now also runs Unused, and fails.
	test := filepath.Join(dir, "calc_test.go")
	data, _ := os.ReadFile(test)
	data = []byte(strings.Replace(string(data), "if Add(1, 2) != 3 {", "if Add(1, 2) != Unused() {", 1))
	if err := os.WriteFile(test, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out = ok(t, cs, "tests_covering", map[string]any{"file_path": "calc.go", "line": 20})
	if got, want := firstLine(out), "calc.go:20 is run by 1 of the package's 3 tests: TestAdd"; got != want || !strings.HasSuffix(out, "\nFailed (what they ran still counts): TestAdd") || !strings.Contains(out, "\nCoverage: computed now in") {
		t.Errorf("after a change:\n%s\nwant %q, computed again", out, want)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"file_path": "calc_test.go"}, "it is a test file"},
		{map[string]any{"file_path": "go.mod"}, "not a Go file"},
		{map[string]any{"file_path": "../x.go"}, "outside the workspace"},
		{map[string]any{"file_path": "calc.go", "line": 0}, "want a line number from 1"},
		{map[string]any{"file_path": "calc.go", "timeout": -1}, "want milliseconds from 0 to"},
	} {
		if got := fails(t, cs, "tests_covering", tc.args); !strings.Contains(got, tc.want) {
			t.Errorf("tests_covering(%v) = %q, want %q in it", tc.args, got, tc.want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
