package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// runCheck runs one check of a fixture and returns its report.
func runCheck(t *testing.T, ws *workspace.Workspace, check string, req Request) *Report {
	t.Helper()
	v := New(ws, Options{Env: langEnv(t)})
	var (
		r   *Report
		err error
	)
	switch check {
	case "tests":
		r, err = v.Test(testCtx(t), req)
	case "lint":
		r, err = v.Lint(testCtx(t), req)
	case "typecheck":
		r, err = v.Typecheck(testCtx(t), req)
	}
	if err != nil {
		t.Fatalf("%s: %v", check, err)
	}
	t.Logf("%s:\n%s", check, r)
	return r
}

// languageCase is one check of one fixture (testdata/NAME) and exactly
// what it must report.
type languageCase struct {
	check   string
	path    string
	want    []string // rendered findings
	summary string   // the summary line, exactly
}

func testLanguage(t *testing.T, fixture string, failed Finding, cases []languageCase) {
	ws := copyFixture(t, fixture)
	for _, c := range cases {
		r := runCheck(t, ws, c.check, Request{Path: c.path})
		if got := rendered(r); !slices.Equal(got, c.want) {
			t.Errorf("%s findings:\n%s\nwant:\n%s", c.check, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		lines := strings.Split(r.String(), "\n")
		if got := lines[len(r.Findings)]; got != c.summary {
			t.Errorf("%s summary = %q, want %q", c.check, got, c.summary)
		}
		if c.check == "tests" && len(r.Findings) == 1 {
			f := r.Findings[0]
			f.Message = failed.Message
			if f != failed {
				t.Errorf("failed test = %#v, want %#v", f, failed)
			}
		}
	}
}

// TestPythonProject: pytest, flake8 and mypy on a fixture with one
// failing test, one unused import and one type error; a check asked for
// in a subdirectory finds the project above it.
func TestPythonProject(t *testing.T) {
	skipInShort(t, "runs pytest, flake8 and mypy")
	env := langEnv(t)
	requireTool(t, env, DefaultPython, "python3")
	requireTool(t, env, "flake8", "flake8")
	requireTool(t, env, "mypy", "mypy")
	testLanguage(t, "python", Finding{
		File: "tests/test_calc.py", Line: 9, Rule: "test:test_sub", Severity: SeverityError,
		Package: "tests.test_calc", Test: "test_sub",
	}, []languageCase{
		{"tests", "tests", []string{"tests/test_calc.py:9: test:test_sub: assert 8 == 2 | +  where 8 = sub(5, 3)"},
			"1 finding; pytest exited 1 (1 passed, 1 failed, 1 skipped) [Python project]"},
		{"lint", "", []string{"calc/__init__.py:2:1: F401: 'os' imported but unused"},
			"1 finding; flake8 exited 1 [Python project]"},
		{"typecheck", "", []string{`calc/__init__.py:14:12: return-value: Incompatible return value type (got "int", expected "str")`},
			"1 finding; mypy exited 1 [Python project]"},
	})
}

// TestRustProject: cargo test, clippy and check on a fixture with one
// failing test and one clippy warning.
func TestRustProject(t *testing.T) {
	skipInShort(t, "compiles a crate")
	env := langEnv(t)
	requireTool(t, env, "cargo", "rustup's cargo, in ~/.cargo/bin")
	requireTool(t, env, "cargo-clippy", "rustup component add clippy")
	testLanguage(t, "rust", Finding{
		File: "src/lib.rs", Line: 26, Col: 9, Rule: "test:tests::subtracts", Severity: SeverityError,
		Package: "calc", Test: "tests::subtracts",
	}, []languageCase{
		{"tests", "src", []string{"src/lib.rs:26:9: test:tests::subtracts: panicked: assertion `left == right` failed | left: 8 | right: 2"},
			"1 finding; cargo test exited 101 (1 passed, 1 failed, 1 ignored) [Rust crate]"},
		{"lint", "", []string{"src/lib.rs:11:20: clippy::ptr_arg: writing `&Vec` instead of `&[_]` involves a new object where a slice will do (warning)"},
			"1 finding; cargo clippy exited 0 [Rust crate]"},
		{"typecheck", "", nil, "no findings; cargo check exited 0 [Rust crate]"},
	})
}

// TestNodeProject: node --test, eslint and tsc on a fixture with one
// failing test, an unused import, a loose comparison and a type error.
func TestNodeProject(t *testing.T) {
	skipInShort(t, "runs node, eslint and tsc")
	env := langEnv(t)
	requireTool(t, env, "node", "nodejs")
	requireTool(t, env, "eslint", "eslint")
	requireTool(t, env, "tsc", "node-typescript")
	testLanguage(t, "node", Finding{
		File: "test/calc.test.js", Line: 11, Col: 12, Rule: "test:subtracts", Severity: SeverityError,
		Package: "calc", Test: "subtracts",
	}, []languageCase{
		{"tests", "test", []string{"test/calc.test.js:11:12: test:subtracts: Expected values to be strictly equal:8 !== 2"},
			"1 finding; node --test exited 1 (1 passed, 1 failed, 1 skipped) [Node.js project]"},
		{"lint", "", []string{
			"src/calc.js:2:10: no-unused-vars: 'readFileSync' is defined but never used.",
			"src/calc.js:13:12: eqeqeq: Expected '===' and instead saw '=='. (warning)",
		}, "2 findings; eslint exited 1 [Node.js project]"},
		{"typecheck", "src", []string{"src/label.ts:3:3: TS2322: Type 'number' is not assignable to type 'string'."},
			"1 finding; tsc exited 2 [Node.js project]"},
	})
}

// TestMarkersMatchTheImages: every file sandboxd detects a project by
// also makes a provider pick the image of the project's language, so a
// project whose tools sandboxd would run lands where they are.
func TestMarkersMatchTheImages(t *testing.T) {
	for lang, det := range map[string]Detector{
		codegenimage.Go: GoDetector{}, codegenimage.Python: PythonDetector{}, codegenimage.Node: NodeDetector{}, codegenimage.Rust: RustDetector{},
	} {
		for _, m := range det.Markers() {
			if !slices.Contains(codegenimage.Markers(lang), m) {
				t.Errorf("%T detects a project by %s, which does not pick the %s image (codegenimage markers: %v)", det, m, lang, codegenimage.Markers(lang))
			}
		}
	}
}
