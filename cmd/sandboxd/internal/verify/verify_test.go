package verify

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

const cleanLib = `package fixture

// Add is what the tests test.
func Add(a, b int) int { return a + b }
`

func TestTypecheckClean(t *testing.T) {
	t.Parallel()
	ws := fixture(t, map[string]string{
		"go.mod":          goMod,
		"add.go":          cleanLib,
		"add_test.go":     "package fixture\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { _ = Add(1, 2) }\n",
		"cmd/app/main.go": "package main\n\nfunc main() { panic(\"typecheck must not run me\") }\n",
	})
	r, err := verifier(t, ws, false).Typecheck(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() || !strings.HasPrefix(r.String(), "no findings; ") {
		t.Errorf("clean module:\n%s", r)
	}
	if strings.Contains(r.String(), "output (tail)") {
		t.Errorf("raw output shown for a clean run:\n%s", r)
	}
}

// TestTypecheckTypeErrors: errors in a package and in a test file (which
// go build would not compile) are all found, at their positions.
func TestTypecheckTypeErrors(t *testing.T) {
	t.Parallel()
	ws := fixture(t, map[string]string{
		"go.mod": goMod,
		"add.go": cleanLib,
		"lib/lib.go": `package lib

func Broken() int {
	return "not an int"
}
`,
		"lib/lib_test.go": `package lib

import "testing"

func TestBroken(t *testing.T) {
	var s string = Broken()
	_ = s
}
`,
	})
	r, err := verifier(t, ws, false).Typecheck(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`lib/lib.go:4:9: compile: cannot use "not an int" (untyped string constant) as int value in return statement`,
		`lib/lib_test.go:6:17: compile: cannot use Broken() (value of type int) as string value in variable declaration`,
	}
	if got := rendered(r); !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.String(), "1 package failed to build: example.com/fixture/lib") {
		t.Errorf("summary:\n%s", r)
	}

	// With the package fixed, the test file's own error shows.
	fixed := fixture(t, map[string]string{
		"go.mod":          goMod,
		"lib/lib.go":      "package lib\n\nfunc Broken() int { return 1 }\n",
		"lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) {\n\tvar s string = Broken()\n\t_ = s\n}\n",
	})
	r, err = verifier(t, fixed, false).Typecheck(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{`lib/lib_test.go:6:17: compile: cannot use Broken() (value of type int) as string value in variable declaration`}
	if got := rendered(r); !slices.Equal(got, want) {
		t.Errorf("test file findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const vetFixture = `package fixture

import "fmt"

// Greet formats a greeting.
func Greet(n int) string {
	return fmt.Sprintf("hello %s", n)
}
`

func TestLintVetWithoutStaticcheck(t *testing.T) {
	t.Parallel()
	ws := fixture(t, map[string]string{"go.mod": goMod, "greet.go": vetFixture})
	r, err := verifier(t, ws, false).Lint(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"greet.go:7:28: printf: fmt.Sprintf format %s has arg n of wrong type int"}
	if got := rendered(r); !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := r.String()
	if !strings.Contains(s, "go vet exited 0") || !strings.Contains(s, "staticcheck not installed, skipped") {
		t.Errorf("summary does not say which linters ran:\n%s", s)
	}
}

func TestLintStaticcheck(t *testing.T) {
	t.Parallel()
	skipInShort(t, "runs staticcheck, which loads the standard library from source")
	if !staticcheckInstalled(t) {
		t.Log("staticcheck is not installed (make lint installs it); only go vet is checked")
	}
	ws := fixture(t, map[string]string{"go.mod": goMod, "greet.go": vetFixture, "dead.go": `package fixture

// Twice overwrites a value it never read.
func Twice() int {
	x := Greet(1)
	x = "2"
	return len(x)
}
`})
	r, err := verifier(t, ws, true).Lint(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	got := rendered(r)
	if !slices.Contains(got, "greet.go:7:28: printf: fmt.Sprintf format %s has arg n of wrong type int") {
		t.Errorf("no vet finding:\n%s", r)
	}
	if !staticcheckInstalled(t) {
		return
	}
	for _, want := range []string{"dead.go:5:2: SA4006: this value of x is never used", "greet.go:7:21: SA5009: "} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("no %q finding:\n%s", want, r)
		}
	}
	if !strings.Contains(r.String(), "staticcheck exited 1") {
		t.Errorf("summary:\n%s", r)
	}
}

const testsFixture = `package fixture

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("broken")
	}
}

func TestWrong(t *testing.T) {
	t.Errorf("Add(2, 2) = %d,\nwant 5", Add(2, 2))
}

func TestSkipped(t *testing.T) {
	t.Skip("not today")
}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}
`

func TestRunTests(t *testing.T) {
	t.Parallel()
	skipInShort(t, "compiles and runs a fixture's tests with go test")
	ws := fixture(t, map[string]string{"go.mod": goMod, "add.go": cleanLib, "add_test.go": testsFixture})
	v := verifier(t, ws, false)
	r, err := v.Test(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	got := rendered(r)
	want := []string{
		"add_test.go:12: test:TestWrong: Add(2, 2) = 4, | want 5",
		"example.com/fixture: test:TestWrong: FAIL",
		"example.com/fixture: test:TestPanics: FAIL",
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	if !strings.Contains(got[2], "panic: assignment to entry in nil map") {
		t.Errorf("the panicking test's finding does not say why: %q", got[2])
	}
	if s := r.String(); !strings.Contains(s, "go test exited 1 (1 passed, 2 failed, 1 skipped)") {
		t.Errorf("summary:\n%s", s)
	}

	var progress []string
	r, err = v.Test(testCtx(t), Request{Run: "^TestAdd$", Progress: func(tool, line string) {
		progress = append(progress, tool+": "+line)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.String(); !r.Clean() || !strings.Contains(s, "(1 passed, 0 failed, 0 skipped)") {
		t.Errorf("run=^TestAdd$:\n%s", s)
	}
	// Progress is go test's text, not its JSON events.
	if !slices.Contains(progress, "go test: === RUN   TestAdd") || !slices.Contains(progress, "go test: --- PASS: TestAdd (0.00s)") {
		t.Errorf("progress:\n%s", strings.Join(progress, "\n"))
	}
}

// TestRunTestsBuildFailure: a package that does not compile is named in
// the summary and its errors are compile findings; the other packages
// still run.
func TestRunTestsBuildFailure(t *testing.T) {
	t.Parallel()
	skipInShort(t, "compiles and runs a fixture's tests with go test")
	ws := fixture(t, map[string]string{
		"go.mod":      goMod,
		"add.go":      cleanLib,
		"add_test.go": "package fixture\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n",
		"bad/bad.go":  "package bad\n\nfunc F() { undefined() }\n",
	})
	r, err := verifier(t, ws, false).Test(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rendered(r), []string{"bad/bad.go:3:12: compile: undefined: undefined"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	if s := r.String(); !strings.Contains(s, "(1 passed, 0 failed, 0 skipped; 1 package failed to build: example.com/fixture/bad)") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestPathAndPackages: a path below the module root finds go.mod above
// it, checks only its subtree, and places findings in the workspace; a
// module below the workspace root is found from there too.
func TestPathAndPackages(t *testing.T) {
	t.Parallel()
	skipInShort(t, "compiles and runs a fixture's tests with go test, three times")
	ws := fixture(t, map[string]string{
		"svc/go.mod":           goMod,
		"svc/add.go":           cleanLib,
		"svc/add_test.go":      "package fixture\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { t.Error(\"root\") }\n",
		"svc/sub/sub_test.go":  "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tt.Error(\"sub\")\n}\n",
		"svc/sub2/sub_test.go": "package sub2\n\nimport \"testing\"\n\nfunc TestSub2(t *testing.T) {}\n",
	})
	v := verifier(t, ws, false)
	r, err := v.Test(testCtx(t), Request{Path: "svc/sub"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rendered(r); len(got) != 2 || got[0] != "svc/sub/sub_test.go:6: test:TestSub: sub" {
		t.Errorf("path svc/sub:\n%s", r)
	}
	if !strings.Contains(r.String(), "[Go module example.com/fixture in svc]") {
		t.Errorf("project not named:\n%s", r)
	}
	r, err = v.Test(testCtx(t), Request{Path: ws.Dir() + "/svc", Packages: []string{"./sub2", "./sub"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.String(); !strings.Contains(s, "(1 passed, 1 failed, 0 skipped)") {
		t.Errorf("packages ./sub2 ./sub:\n%s", s)
	}
	if _, err := v.Typecheck(testCtx(t), Request{}); err == nil || err.Error() != "no supported project found at the workspace root (looked for go.mod, Cargo.toml, pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini, package.json, tsconfig.json)" {
		t.Errorf("no go.mod at or above the root: %v", err)
	}
}

func TestArgumentsRefused(t *testing.T) {
	t.Parallel()
	ws := fixture(t, map[string]string{"go.mod": goMod, "add.go": cleanLib, "dir/x.txt": "x", "file.txt": "x"})
	v := verifier(t, ws, false)
	ctx := testCtx(t)
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Packages: []string{"-exec=/bin/sh"}}, "starts with '-'"},
		{Request{Packages: []string{"./...", "-toolexec=x"}}, "starts with '-'"},
		{Request{Packages: []string{"../..."}}, "outside the workspace"},
		{Request{Packages: []string{"/etc/..."}}, "outside the workspace"},
		{Request{Path: "dir", Packages: []string{"../../x"}}, "outside the workspace"},
		{Request{Path: "../"}, "outside the workspace"},
		{Request{Path: "/tmp"}, "outside the workspace"},
		{Request{Path: "nope"}, `path "nope" does not exist`},
		{Request{Path: "file.txt"}, "not a directory"},
		{Request{Timeout: MaxTimeout + time.Millisecond}, "want at most 30m0s"},
		{Request{Timeout: -time.Second}, "want at most"},
		{Request{Run: "a\nb"}, "newline"},
	} {
		_, err := v.Test(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Test(%+v) = %v, want an error with %q", tc.req, err, tc.want)
		}
	}
	var npe *NoProjectError
	if _, err := v.Lint(ctx, Request{Path: "dir"}); err != nil {
		t.Errorf("dir is inside the module: %v", err)
	} else if _, err := New(ws, Options{Env: testEnv(t, false), Detectors: []Detector{}}).Lint(ctx, Request{Path: "dir"}); !errors.As(err, &npe) || npe.Path != "dir" {
		t.Errorf("no detectors: %v", err)
	}
}

// TestTimeoutKillsTheRun: the call's timeout ends go test and the test
// binary it started, and the report names the test that was running.
func TestTimeoutKillsTheRun(t *testing.T) {
	skipInShort(t, "waits out an 8s go test timeout")
	ws := fixture(t, map[string]string{
		"go.mod": goMod,
		"add.go": cleanLib,
		"add_test.go": `package fixture

import (
	"os"
	"strconv"
	"testing"
	"time"
)

func TestHangs(t *testing.T) {
	os.WriteFile("hang.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
	time.Sleep(10 * time.Minute)
}
`,
	})
	start := time.Now()
	r, err := verifier(t, ws, false).Test(testCtx(t), Request{Timeout: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("an 8s timeout took %s", took)
	}
	s := r.String()
	if !strings.Contains(s, "go test timed out after 8s and was killed") {
		t.Errorf("summary:\n%s", s)
	}
	if !slices.Contains(rendered(r), "example.com/fixture: test:TestHangs: still running when the command was stopped") {
		t.Errorf("the hanging test is not named:\n%s", s)
	}
	b, err := os.ReadFile(filepath.Join(ws.Dir(), "hang.pid"))
	if err != nil {
		t.Fatalf("the test binary did not start: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	proctest.Gone(t, "the hanging test binary", pid)
}

// TestMissingToolExplains: a required tool that is not installed is an
// error that says so, not an empty report.
func TestMissingToolExplains(t *testing.T) {
	ws := fixture(t, map[string]string{"go.mod": goMod, "add.go": cleanLib})
	_, err := New(ws, Options{Env: []string{"PATH=/nonexistent"}}).Typecheck(testCtx(t), Request{})
	if err == nil || !strings.Contains(err.Error(), "go not found on PATH") {
		t.Errorf("no go: %v", err)
	}
}

// TestBrokenGoModIsAFinding: the go command's own errors, with a
// position, are findings too.
func TestBrokenGoModIsAFinding(t *testing.T) {
	t.Parallel()
	ws := fixture(t, map[string]string{"go.mod": goMod + "\nbogus directive\n", "add.go": cleanLib})
	r, err := verifier(t, ws, false).Typecheck(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rendered(r), []string{"go.mod:5: build: unknown directive: bogus"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// shDetector is a project type whose checks are shell commands, marked
// by a file named "check.sh".
type shDetector struct{ script string }

func (shDetector) Markers() []string { return []string{"check.sh"} }

func (d shDetector) Detect(ws *workspace.Workspace, dir string) (Project, bool, error) {
	ok, err := isFile(ws, filepath.Join(dir, "check.sh"))
	return shProject(d), ok, err
}

type shProject struct{ script string }

func (shProject) Name() string { return "shell project" }

func (p shProject) Typecheck() []Step {
	return []Step{{Tool: "sh", Command: "sh", Args: []string{"-c", p.script}, NewParser: newVetParser}}
}
func (p shProject) Lint() []Step            { return p.Typecheck() }
func (p shProject) Test(TestOptions) []Step { return p.Typecheck() }

// TestUnparsedFailureShowsTail: when a command fails and nothing in its
// output reads as a finding, the tail of its raw output is shown; when
// it succeeds, or findings explain it, the raw output is not.
func TestUnparsedFailureShowsTail(t *testing.T) {
	ws := fixture(t, map[string]string{"check.sh": ""})
	run := func(script string) string {
		t.Helper()
		v := New(ws, Options{Env: testEnv(t, false), Detectors: []Detector{shDetector{script}}})
		r, err := v.Typecheck(testCtx(t), Request{})
		if err != nil {
			t.Fatal(err)
		}
		return r.String()
	}
	got := run(`seq 1 5000; echo "something broke: the disk is full" >&2; exit 3`)
	if !strings.Contains(got, "no findings; sh exited 3") || !strings.Contains(got, "--- sh output (tail) ---") ||
		!strings.Contains(got, "\n5000\n") || !strings.Contains(got, "\nsomething broke: the disk is full") {
		// stdout and stderr are read apart, so their order in the tail is
		// not fixed.
		t.Errorf("unexplained failure:\n%s", got)
	}
	if len(got) > 2*tailBytes {
		t.Errorf("the tail is %d bytes", len(got))
	}
	if got := run(`echo chatter; exit 0`); got != "no findings; sh exited 0 [shell project]" {
		t.Errorf("success shows output: %q", got)
	}
	if got := run(`echo 'vet: x.go:1:2: bad' >&2; exit 1`); strings.Contains(got, "output (tail)") || !strings.HasPrefix(got, "x.go:1:2: compile: bad") {
		t.Errorf("explained failure: %q", got)
	}
}
