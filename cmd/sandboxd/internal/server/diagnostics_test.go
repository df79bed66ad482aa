package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// diagEnv is a checker's environment: the shared Go build cache (a cold
// one would compile the standard library), no module proxy, and cargo's
// toolchain, which rustup keeps under the real home.
func diagEnv(t testing.TB, pathFirst string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	goenv := strings.Split(strings.TrimSpace(string(out)), "\n")
	home, _ := os.UserHomeDir()
	path := filepath.Join(goenv[2], "bin") + ":/usr/local/bin:/usr/bin:/bin:" + filepath.Join(home, ".cargo", "bin")
	if pathFirst != "" {
		path = pathFirst + ":" + path
	}
	return []string{
		"PATH=" + path, "HOME=" + t.TempDir(), "LANG=C",
		"GOCACHE=" + goenv[0], "GOMODCACHE=" + goenv[1], "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
		"RUSTUP_HOME=" + filepath.Join(home, ".rustup"), "CARGO_HOME=" + filepath.Join(home, ".cargo"),
	}
}

// needTool skips when program is not on env's PATH and CI is unset; in
// CI, make test has installed it and its absence fails the test.
func needTool(t testing.TB, env []string, program, pkg string) {
	t.Helper()
	path, _ := strings.CutPrefix(env[0], "PATH=")
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, program)); err == nil && fi.Mode()&0o111 != 0 {
			return
		}
	}
	ci.Skipf(t, "%s is not installed (install %s, or make test-deps)", program, pkg)
}

// writeFiles puts files (path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// diagDaemon serves a workspace holding files, with checkers on env.
func diagDaemon(t testing.TB, files map[string]string, env []string, timeout time.Duration) (*daemon, *mcp.ClientSession) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: env, DiagnosticsTimeout: timeout})
	return d, d.connect(t, streamable)
}

// diagnostics is what follows the tool's own first line of result.
func diagnostics(out string) string {
	_, after, _ := strings.Cut(out, "\n\n")
	return after
}

// TestGoDiagnosticsAfterEdit: an Edit that breaks the build gets every
// compile error of the edited file (not only go vet's first), an Edit
// that fixes it says there is nothing left, a Write gets go vet's
// findings, and findings in the package's other files are left out.
func TestGoDiagnosticsAfterEdit(t *testing.T) {
	t.Parallel()
	env := diagEnv(t, "")
	_, cs := diagDaemon(t, map[string]string{
		"go.mod":   "module example.com/app\n\ngo 1.22\n",
		"pkg/p.go": "package pkg\n\nfunc A() int { return 1 }\n\nfunc B() string { return \"b\" }\n",
		// other.go has a vet finding of its own, which no edit here
		// touches.
		"pkg/other.go": "package pkg\n\nimport \"fmt\"\n\nfunc C() { fmt.Printf(\"%d\\n\", \"c\") }\n",
	}, env, time.Minute)
	ok(t, cs, "Read", map[string]any{"file_path": "pkg/p.go"})

	out := ok(t, cs, "Edit", map[string]any{"file_path": "pkg/p.go", "old_string": "return 1 }\n\nfunc B() string { return \"b\" }", "new_string": "return \"a\" }\n\nfunc B() string { return 2 }"})
	want := "Diagnostics (go vet, go build): 2 findings\n" +
		"pkg/p.go:3:23: compile: cannot use \"a\" (untyped string constant) as int value in return statement\n" +
		"pkg/p.go:5:26: compile: cannot use 2 (untyped int constant) as string value in return statement"
	if got := diagnostics(out); got != want {
		t.Errorf("Edit that breaks the build:\n%s\nwant diagnostics:\n%s", out, want)
	}
	if !strings.HasPrefix(out, "Edited ") && !strings.Contains(strings.SplitN(out, "\n", 2)[0], "p.go") {
		t.Errorf("Edit's own result is gone: %q", out)
	}

	out = ok(t, cs, "Edit", map[string]any{"file_path": "pkg/p.go", "old_string": "return \"a\" }\n\nfunc B() string { return 2 }", "new_string": "return 1 }\n\nfunc B() string { return \"b\" }"})
	if got, want := diagnostics(out), "Diagnostics (go vet): no problems found"; got != want {
		t.Errorf("Edit that fixes the build:\n%s\nwant diagnostics %q", out, want)
	}

	out = ok(t, cs, "Write", map[string]any{"file_path": "pkg/w.go", "content": "package pkg\n\nimport \"fmt\"\n\nfunc W() { fmt.Printf(\"%s\\n\") }\n"})
	want = "Diagnostics (go vet): 1 finding\npkg/w.go:5:24: printf: fmt.Printf format %s reads arg #1, but call has 0 args"
	if got := diagnostics(out); got != want {
		t.Errorf("Write with a vet finding:\n%s\nwant diagnostics:\n%s", out, want)
	}

	// A file no checker applies to gets nothing appended.
	if out := ok(t, cs, "Write", map[string]any{"file_path": "README.md", "content": "# app\n"}); diagnostics(out) != "" {
		t.Errorf("Write of a Markdown file: %q", out)
	}
}

// TestPythonDiagnosticsAfterEdit: pyflakes' findings follow an Edit that
// breaks a Python file and are gone after the Edit that fixes it.
func TestPythonDiagnosticsAfterEdit(t *testing.T) {
	t.Parallel()
	env := diagEnv(t, "")
	needTool(t, env, "pyflakes3", "pyflakes3")
	_, cs := diagDaemon(t, map[string]string{"app/calc.py": "import os\n\n\ndef add(a, b):\n    return a + b\n"}, env, time.Minute)
	ok(t, cs, "Read", map[string]any{"file_path": "app/calc.py"})
	out := ok(t, cs, "Edit", map[string]any{"file_path": "app/calc.py", "old_string": "return a + b", "new_string": "return a + c"})
	want := "Diagnostics (pyflakes): 2 findings\n" +
		"app/calc.py:1:1: pyflakes: 'os' imported but unused\n" +
		"app/calc.py:5:16: pyflakes: undefined name 'c'"
	if got := diagnostics(out); got != want {
		t.Errorf("Edit that breaks the file:\n%s\nwant diagnostics:\n%s", out, want)
	}
	out = ok(t, cs, "Write", map[string]any{"file_path": "app/calc.py", "content": "def add(a, b):\n    return a + b\n"})
	if got, want := diagnostics(out), "Diagnostics (pyflakes): no problems found"; got != want {
		t.Errorf("Write that fixes it:\n%s\nwant diagnostics %q", out, want)
	}
}

// TestTypeScriptDiagnosticsAfterEdit: tsc checks the edited file's
// tsconfig project and reports only the edited file.
func TestTypeScriptDiagnosticsAfterEdit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping in -short mode: runs node's tsc twice (make test runs it)")
	}
	env := diagEnv(t, "")
	needTool(t, env, "tsc", "node-typescript")
	// lib without the DOM's declarations, which tsc would otherwise parse
	// on every check: two thirds of its time.
	_, cs := diagDaemon(t, map[string]string{
		"web/tsconfig.json": `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020", "lib": ["es2020"]}, "include": ["src"]}`,
		"web/src/a.ts":      "export function a(n: number): string {\n  return String(n);\n}\n",
		"web/src/other.ts":  "export const other: number = \"not a number\";\n",
	}, env, time.Minute)
	ok(t, cs, "Read", map[string]any{"file_path": "web/src/a.ts"})
	out := ok(t, cs, "Edit", map[string]any{"file_path": "web/src/a.ts", "old_string": "String(n)", "new_string": "n"})
	want := "Diagnostics (tsc): 1 finding\nweb/src/a.ts:2:3: TS2322: Type 'number' is not assignable to type 'string'."
	if got := diagnostics(out); got != want {
		t.Errorf("Edit that breaks the file:\n%s\nwant diagnostics:\n%s", out, want)
	}
	out = ok(t, cs, "Edit", map[string]any{"file_path": "web/src/a.ts", "old_string": "return n;", "new_string": "return String(n);"})
	if got, want := diagnostics(out), "Diagnostics (tsc): no problems found"; got != want {
		t.Errorf("Edit that fixes it:\n%s\nwant diagnostics %q", out, want)
	}
}

// TestRustDiagnosticsAfterEdit: cargo check on the edited file's crate.
func TestRustDiagnosticsAfterEdit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping in -short mode: compiles a crate (make test runs it)")
	}
	env := diagEnv(t, "")
	needTool(t, env, "cargo", "rustup's cargo, in ~/.cargo/bin")
	_, cs := diagDaemon(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
	}, env, 2*time.Minute)
	ok(t, cs, "Read", map[string]any{"file_path": "src/lib.rs"})
	out := ok(t, cs, "Edit", map[string]any{"file_path": "src/lib.rs", "old_string": "a + b", "new_string": "\"sum\""})
	want := "Diagnostics (cargo check): 1 finding\nsrc/lib.rs:2:5: E0308: mismatched types"
	if got := diagnostics(out); got != want {
		t.Errorf("Edit that breaks the crate:\n%s\nwant diagnostics:\n%s", out, want)
	}
	out = ok(t, cs, "Edit", map[string]any{"file_path": "src/lib.rs", "old_string": "\"sum\"", "new_string": "a + b"})
	if got, want := diagnostics(out), "Diagnostics (cargo check): no problems found"; got != want {
		t.Errorf("Edit that fixes it:\n%s\nwant diagnostics %q", out, want)
	}
}

// TestDiagnosticsAreBounded: a checker that outlasts the limit is
// stopped, with its whole process group, and the result says so; a
// flood of findings is cut at the line cap, saying how many are left
// out.
func TestDiagnosticsAreBounded(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	writeFiles(t, bin, map[string]string{"pyflakes3": "#!/bin/sh\nsleep 60 &\nsleep 60\n"})
	if err := os.Chmod(filepath.Join(bin, "pyflakes3"), 0o755); err != nil {
		t.Fatal(err)
	}
	var flood strings.Builder
	flood.WriteString("package pkg\n\nimport \"fmt\"\n\nfunc F() {\n")
	for range 60 {
		flood.WriteString("\tfmt.Printf(\"%d\\n\", \"x\")\n")
	}
	flood.WriteString("}\n")
	_, cs := diagDaemon(t, map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n"}, diagEnv(t, bin), 700*time.Millisecond)

	start := time.Now()
	out := ok(t, cs, "Write", map[string]any{"file_path": "slow.py", "content": "x = 1\n"})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Write with a hung checker took %s", took)
	}
	if got, want := diagnostics(out), "Diagnostics\npyflakes timed out after 700ms and was stopped: its findings are missing"; got != want {
		t.Errorf("Write with a hung checker:\n%s\nwant diagnostics:\n%s", out, want)
	}

	// The flood needs go vet to finish: give it the time.
	_, cs = diagDaemon(t, map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n"}, diagEnv(t, ""), time.Minute)
	out = ok(t, cs, "Write", map[string]any{"file_path": "pkg/flood.go", "content": flood.String()})
	lines := strings.Split(diagnostics(out), "\n")
	if len(lines) != 52 || lines[0] != "Diagnostics (go vet): 60 findings" ||
		lines[1] != `pkg/flood.go:6:14: printf: fmt.Printf format %d has arg "x" of wrong type string` ||
		lines[51] != "... and 10 more findings not shown" {
		t.Errorf("flood of findings: %d lines:\n%s", len(lines), out)
	}
}

// TestDiagnosticsOff: a negative limit turns the checks off.
func TestDiagnosticsOff(t *testing.T) {
	t.Parallel()
	_, cs := diagDaemon(t, map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n"}, diagEnv(t, ""), -1)
	out := ok(t, cs, "Write", map[string]any{"file_path": "p.go", "content": "package p\n\nvar X int = \"x\"\n"})
	if diagnostics(out) != "" {
		t.Errorf("diagnostics ran though off: %s", out)
	}
}

// TestDiagnosticsAreScrubbed: a finding that quotes a secret (here an
// identifier the compiler cannot resolve) comes back redacted, as every
// tool result does.
func TestDiagnosticsAreScrubbed(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3tvalue"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n"})
	d := startDaemon(t, Config{
		Workspaces: []Workspace{{Dir: dir}}, Env: diagEnv(t, ""), DiagnosticsTimeout: time.Minute,
		Secrets: map[string]string{"APP_SECRET": secret},
	})
	cs := d.connect(t, streamable)
	out := ok(t, cs, "Write", map[string]any{"file_path": "p.go", "content": "package p\n\nvar X = " + secret + "\n"})
	if strings.Contains(out, secret) || !strings.Contains(out, "p.go:3:9: compile: undefined: [REDACTED:secret:APP_SECRET]") {
		t.Errorf("diagnostics not scrubbed, or no finding:\n%s", out)
	}
}
