package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// copyTree copies the verify package's fixture project name into a
// fresh workspace, so what the tools write (Cargo.lock, target/) stays
// out of the repository.
func copyTree(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "verify", "testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestChecksOfOtherLanguagesOverMCP: run_tests, run_lint and
// run_typecheck on a Python, a Rust and a Node.js fixture answer with
// exactly the findings and summary the real tools' output makes.
func TestChecksOfOtherLanguagesOverMCP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping in -short mode: runs pytest, cargo, node and their linters (make test runs it)")
	}
	env := diagEnv(t, "")
	for _, lang := range []struct {
		fixture string
		tools   [][2]string // program, package
		want    map[string]string
	}{
		{"python", [][2]string{{"python3", "python3"}, {"pytest-3", "python3-pytest"}, {"flake8", "flake8"}, {"mypy", "mypy"}}, map[string]string{
			"run_tests": "tests/test_calc.py:9: test:test_sub: assert 8 == 2 | +  where 8 = sub(5, 3)\n" +
				"1 finding; pytest exited 1 (1 passed, 1 failed, 1 skipped) [Python project]",
			"run_lint": "calc/__init__.py:2:1: F401: 'os' imported but unused\n1 finding; flake8 exited 1 [Python project]",
			"run_typecheck": `calc/__init__.py:14:12: return-value: Incompatible return value type (got "int", expected "str")` +
				"\n1 finding; mypy exited 1 [Python project]",
		}},
		{"rust", [][2]string{{"cargo", "rustup's cargo, in ~/.cargo/bin"}, {"cargo-clippy", "rustup component add clippy"}}, map[string]string{
			"run_tests": "src/lib.rs:26:9: test:tests::subtracts: panicked: assertion `left == right` failed | left: 8 | right: 2\n" +
				"1 finding; cargo test exited 101 (1 passed, 1 failed, 1 ignored) [Rust crate]",
			"run_lint": "src/lib.rs:11:20: clippy::ptr_arg: writing `&Vec` instead of `&[_]` involves a new object where a slice will do (warning)\n" +
				"1 finding; cargo clippy exited 0 [Rust crate]",
			"run_typecheck": "no findings; cargo check exited 0 [Rust crate]",
		}},
		{"node", [][2]string{{"node", "nodejs"}, {"eslint", "eslint"}, {"tsc", "node-typescript"}}, map[string]string{
			"run_tests": "test/calc.test.js:11:12: test:subtracts: Expected values to be strictly equal:8 !== 2\n" +
				"1 finding; node --test exited 1 (1 passed, 1 failed, 1 skipped) [Node.js project]",
			"run_lint": "src/calc.js:2:10: no-unused-vars: 'readFileSync' is defined but never used.\n" +
				"src/calc.js:13:12: eqeqeq: Expected '===' and instead saw '=='. (warning)\n" +
				"2 findings; eslint exited 1 [Node.js project]",
			"run_typecheck": "src/label.ts:3:3: TS2322: Type 'number' is not assignable to type 'string'.\n" +
				"1 finding; tsc exited 2 [Node.js project]",
		}},
	} {
		t.Run(lang.fixture, func(t *testing.T) {
			for _, tool := range lang.tools {
				needTool(t, env, tool[0], tool[1])
			}
			d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: copyTree(t, lang.fixture)}}, Env: env, DiagnosticsTimeout: time.Minute})
			cs := d.connect(t, streamable)
			for _, check := range []string{"run_tests", "run_lint", "run_typecheck"} {
				if got := ok(t, cs, check, map[string]any{"timeout": 300000}); got != lang.want[check] {
					t.Errorf("%s =\n%s\nwant\n%s", check, got, lang.want[check])
				}
			}
		})
	}
}
