package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// failingProject is a Go module whose tests fail while broken.flag
// exists, and log each test they run (by package and full name) to
// ran.log at the module root.
var failingProject = map[string]string{
	"go.mod":      "module example.com/loop\n\ngo 1.22\n",
	"broken.flag": "",
	"ranlog/ranlog.go": `package ranlog

import (
	"os"
	"path/filepath"
	"testing"
)

// Ran logs t's name under pkg, and fails t while broken.flag exists.
func Ran(t *testing.T, pkg string, canFail bool) {
	f, err := os.OpenFile(filepath.Join("..", "ran.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(pkg + " " + t.Name() + "\n")
	if _, err := os.Stat(filepath.Join("..", "broken.flag")); err == nil && canFail {
		t.Error("broken")
	}
}
`,
	"alpha/alpha_test.go": `package alpha

import (
	"testing"

	"example.com/loop/ranlog"
)

func TestA(t *testing.T) {
	ranlog.Ran(t, "alpha", false)
	t.Run("sub case (x+y)", func(t *testing.T) { ranlog.Ran(t, "alpha", true) })
	t.Run("fine", func(t *testing.T) { ranlog.Ran(t, "alpha", false) })
}

func TestPlainFail(t *testing.T) { ranlog.Ran(t, "alpha", true) }

func TestPass(t *testing.T) { ranlog.Ran(t, "alpha", false) }
`,
	"beta/beta_test.go": `package beta

import (
	"testing"

	"example.com/loop/ranlog"
)

func TestB(t *testing.T) { ranlog.Ran(t, "beta", true) }

// TestA shares a name with a failing test in alpha, and must not rerun.
func TestA(t *testing.T) { ranlog.Ran(t, "beta", false) }

// TestPlainFail shares a name with a failing test in alpha, and must not rerun.
func TestPlainFail(t *testing.T) { ranlog.Ran(t, "beta", false) }
`,
}

// TestRunFailingTestsOverMCP: run_failing_tests reruns exactly the tests
// run_tests saw fail, a subtest whose name has a space and regex
// metacharacters included, each package only its own; after a fix they
// pass and the record empties. Another session has no record.
func TestRunFailingTestsOverMCP(t *testing.T) {
	t.Parallel()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	dir := t.TempDir()
	for name, content := range failingProject {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, Config{
		Workspaces: []Workspace{{Dir: dir}},
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C",
			"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
		},
	})
	cs := d.connect(t, streamable)
	ranLog := func() []string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "ran.log"))
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "ran.log"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(lines)
		return lines
	}

	if got := ok(t, cs, "last_test_failures", nil); got != noRecord {
		t.Fatalf("before any run: %q", got)
	}
	if got := ok(t, cs, "run_failing_tests", nil); got != noRecord {
		t.Fatalf("rerun before any run: %q", got)
	}
	got := ok(t, cs, "run_tests", map[string]any{"timeout": 120000})
	if !strings.Contains(got, "4 passed, 4 failed, 0 skipped") {
		t.Fatalf("run_tests:\n%s", got)
	}
	ranLog()
	failing := "example.com/loop/alpha TestA\nexample.com/loop/alpha TestA/sub_case_(x+y)\nexample.com/loop/alpha TestPlainFail\nexample.com/loop/beta TestB\n"
	if got := ok(t, cs, "last_test_failures", nil); !strings.HasPrefix(got, failing+"4 failing tests recorded from the run at ") {
		t.Fatalf("last_test_failures:\n%s", got)
	}
	if got := ok(t, cs, "last_test_failures", map[string]any{"limit": 1}); !strings.HasPrefix(got, "example.com/loop/alpha TestA\n4 failing tests") || !strings.HasSuffix(got, "(showing 1)") {
		t.Fatalf("last_test_failures(limit 1):\n%s", got)
	}

	got = ok(t, cs, "run_failing_tests", map[string]any{"timeout": 120000})
	wantRan := []string{"alpha TestA", "alpha TestA/sub_case_(x+y)", "alpha TestPlainFail", "beta TestB"}
	if ran := ranLog(); !slices.Equal(ran, wantRan) {
		t.Fatalf("run_failing_tests ran\n%q\nwant\n%q\noutput:\n%s", ran, wantRan, got)
	}
	if !strings.HasSuffix(got, "Reran 4 recorded failing tests: 0 now pass, 4 still fail, 0 did not run.") {
		t.Fatalf("run_failing_tests while still broken:\n%s", got)
	}
	if got := ok(t, cs, "last_test_failures", nil); !strings.HasPrefix(got, failing) {
		t.Fatalf("record after a failing rerun:\n%s", got)
	}

	// Another session has a record of its own: none.
	if got := ok(t, d.connect(t, streamable), "run_failing_tests", nil); got != noRecord {
		t.Fatalf("another session: %q", got)
	}

	if err := os.Remove(filepath.Join(dir, "broken.flag")); err != nil {
		t.Fatal(err)
	}
	got = ok(t, cs, "run_failing_tests", nil)
	if ran := ranLog(); !slices.Equal(ran, wantRan) {
		t.Fatalf("run_failing_tests after the fix ran %q", ran)
	}
	want := "Reran 4 recorded failing tests: 4 now pass, 0 still fail, 0 did not run.\nNow passing: " +
		"example.com/loop/alpha TestA, example.com/loop/alpha TestA/sub_case_(x+y), example.com/loop/alpha TestPlainFail, example.com/loop/beta TestB"
	if !strings.HasSuffix(got, want) {
		t.Fatalf("run_failing_tests after the fix:\n%s\nwant it to end\n%s", got, want)
	}
	if got := ok(t, cs, "last_test_failures", nil); !strings.HasPrefix(got, "No failing tests: the last run") {
		t.Fatalf("record after the fix: %q", got)
	}
	if got := ok(t, cs, "run_failing_tests", nil); !strings.HasPrefix(got, "No failing tests recorded") {
		t.Fatalf("rerun with nothing failing: %q", got)
	}

	// The session's end forgets its record.
	records := func() int {
		d.srv.failed.mu.Lock()
		defer d.srv.failed.mu.Unlock()
		return len(d.srv.failed.records)
	}
	if n := records(); n != 1 {
		t.Fatalf("%d records held, want 1", n)
	}
	cs.Close()
	for start := time.Now(); records() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%d records held after the session ended", records())
		}
	}
}
