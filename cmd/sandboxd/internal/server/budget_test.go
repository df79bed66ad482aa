package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// testBudget is the call budget of these tests: short, so they are
// quick, and long enough for a quick command to finish within it.
const testBudget = 300 * time.Millisecond

var handedOver = regexp.MustCompile(`goes on in the background as shell (bash_[0-9a-f]{8})\.`)

// shellOf is the background shell a partial answer names.
func shellOf(t *testing.T, answer string) string {
	t.Helper()
	m := handedOver.FindStringSubmatch(answer)
	if m == nil {
		t.Fatalf("not handed over: %q", answer)
	}
	return m[1]
}

// waitShell reads shell id with BashOutput until it has ended, and
// returns its last status and everything it printed over the reads.
func waitShell(t *testing.T, cs *mcp.ClientSession, id string) (string, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var printed strings.Builder
	for {
		out := ok(t, cs, "BashOutput", map[string]any{"bash_id": id})
		status, rest, _ := strings.Cut(out, "\n")
		if rest != "(no new output)" {
			printed.WriteString(rest)
			printed.WriteByte('\n')
		}
		if status != "Status: running" {
			return status, printed.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still runs", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCallBudgetBash: over either transport, a Bash command that
// outlives the budget answers with its output so far, marked partial,
// and the shell it goes on in; BashOutput reads the rest and the exit
// code. A quick command, or one whose timeout is within the budget,
// answers as without a budget.
func TestCallBudgetBash(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{streamable, sse} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			d := startDaemon(t, Config{CallBudget: testBudget})
			cs := d.connect(t, tr)
			began := time.Now()
			got := ok(t, cs, "Bash", map[string]any{"command": "echo before; while [ ! -e go ]; do sleep 0.01; done; echo after; exit 3"})
			if el := time.Since(began); el > testBudget+5*time.Second {
				t.Errorf("the answer took %s", el)
			}
			id := shellOf(t, got)
			want := "[PARTIAL OUTPUT: the command is still running after 300ms, the call budget, and goes on in the background as shell " + id + ". Its output so far:]\nbefore\n" +
				`[NOT FINISHED. Next: call BashOutput with bash_id "` + id + `" for what it prints from now on and, once it has ended, its exit code; call it again while the status is "running". To stop it, call KillShell with shell_id "` + id + `". Its timeout still applies: it is killed 2m0s after it started.]`
			if got != want {
				t.Errorf("partial answer:\n%s\nwant:\n%s", got, want)
			}
			os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o644)
			status, printed := waitShell(t, cs, id)
			if status != "Status: exited with code 3" || printed != "--- stdout ---\nafter\n" {
				t.Errorf("the rest: %q, %q", status, printed)
			}

			if got := ok(t, cs, "Bash", map[string]any{"command": "echo quick"}); got != "quick\n" {
				t.Errorf("a quick command: %q", got)
			}
			if got := ok(t, cs, "Bash", map[string]any{"command": "echo hi; sleep 60", "timeout": 200}); got != "hi\nCommand timed out after 200ms" {
				t.Errorf("a timeout within the budget: %q", got)
			}
		})
	}
}

// TestCallBudgetToolText: the tools that may be handed over say so, with
// the budget, in their descriptions; without a budget they do not.
func TestCallBudgetToolText(t *testing.T) {
	t.Parallel()
	for budget, want := range map[time.Duration]bool{testBudget: true, 0: false} {
		d := startDaemon(t, Config{CallBudget: budget})
		cs := d.connect(t, streamable)
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(cs.InitializeResult().Instructions, "No call holds you longer than 300ms"); has != want {
			t.Errorf("budget %s: instructions %q", budget, cs.InitializeResult().Instructions)
		}
		for _, tool := range tools.Tools {
			switch tool.Name {
			case "BashOutput", "KillShell":
				if has := strings.Contains(tool.Description, "outlived its call's budget"); has != want {
					t.Errorf("budget %s: %s's description: %s", budget, tool.Name, tool.Description)
				}
			case "Bash", "run_tests", "run_lint", "run_typecheck", "run_failing_tests":
				if has := strings.Contains(tool.Description, "still running after 300ms (the call budget)") || strings.Contains(tool.Description, "still going after 300ms (the call budget)"); has != want {
					t.Errorf("budget %s: %s's description: %s", budget, tool.Name, tool.Description)
				}
			}
		}
	}
}

// TestCallBudgetSessionEndKillsHandedOver: a command handed over belongs
// to its session, whose end (here the SSE stream closing) kills it.
func TestCallBudgetSessionEndKillsHandedOver(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{CallBudget: testBudget})
	cs := d.connect(t, sse)
	shellOf(t, ok(t, cs, "Bash", map[string]any{"command": sleeper}))
	ids := proctest.Identify(t, proctest.ReadPIDs(t, filepath.Join(d.dir, "pids"), 2)...)
	cs.Close()
	proctest.AssertGone(t, ids...)
}

// TestCallBudgetRunTests: run_tests past the budget goes on in the
// background; BashOutput gives its whole report once it has ended, and
// its result is recorded for run_failing_tests as a call's would be.
func TestCallBudgetRunTests(t *testing.T) {
	t.Parallel()
	cfg := goProject(t, sleepyProject)
	cfg.CallBudget = testBudget
	d := startDaemon(t, cfg)
	cs := d.connect(t, streamable)
	got := ok(t, cs, "run_tests", nil)
	id := shellOf(t, got)
	if !strings.HasPrefix(got, "[PARTIAL: run_tests is still running after 300ms, the call budget, and goes on in the background as shell "+id+".") ||
		!strings.HasSuffix(got, `[NOT FINISHED. Next: call BashOutput with bash_id "`+id+`": while the run goes on its status is "running"; once it has ended (status "finished") its output is the whole run_tests report, as this call would have answered. The failed tests are recorded for run_failing_tests when it ends. To stop it and every process it started, call KillShell with shell_id "`+id+`". Its timeout still applies: it is stopped 10m0s after it started.]`) {
		t.Errorf("partial answer:\n%s", got)
	}
	if got := ok(t, cs, "last_test_failures", nil); got != noRecord {
		t.Errorf("recorded before it ended: %q", got)
	}
	proctest.ReadPIDsWithin(t, filepath.Join(d.dir, "pids"), 1, time.Minute)
	os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o644)
	status, printed := waitShell(t, cs, id)
	if status != "Status: finished" || !strings.HasPrefix(printed, "--- stdout ---\nno findings; go test exited 0 (1 passed, 0 failed, 0 skipped)") {
		t.Errorf("the report: %q\n%s", status, printed)
	}
	if got := ok(t, cs, "last_test_failures", nil); !strings.HasPrefix(got, "No failing tests: the last run") {
		t.Errorf("not recorded: %q", got)
	}
}

// TestCallBudgetKillShellStopsTheRun: KillShell on a run handed over
// stops the processes it started.
func TestCallBudgetKillShellStopsTheRun(t *testing.T) {
	t.Parallel()
	cfg := goProject(t, sleepyProject)
	cfg.CallBudget = testBudget
	d := startDaemon(t, cfg)
	cs := d.connect(t, sse)
	id := shellOf(t, ok(t, cs, "run_tests", nil))
	ids := proctest.Identify(t, proctest.ReadPIDsWithin(t, filepath.Join(d.dir, "pids"), 1, time.Minute)...)
	if got := ok(t, cs, "KillShell", map[string]any{"shell_id": id}); got != "Killed background shell "+id {
		t.Errorf("KillShell: %q", got)
	}
	proctest.AssertGone(t, ids...)
	if got := ok(t, cs, "BashOutput", map[string]any{"bash_id": id}); got != "Status: killed\n(no new output)" {
		t.Errorf("BashOutput: %q", got)
	}
}

// TestCallBudgetShortRunTimeout: a run whose timeout is within the
// budget holds its call to the end, as without a budget.
func TestCallBudgetShortRunTimeout(t *testing.T) {
	t.Parallel()
	cfg := goProject(t, sleepyProject)
	cfg.CallBudget = 5 * time.Second
	d := startDaemon(t, cfg)
	cs := d.connect(t, streamable)
	got := ok(t, cs, "run_tests", map[string]any{"timeout": 1000})
	if strings.Contains(got, "PARTIAL") || !strings.Contains(got, "timed out") {
		t.Errorf("run_tests with a 1s timeout:\n%s", got)
	}
}

func TestPartialRunShowsTheEndOfTheOutput(t *testing.T) {
	p := &progress{}
	if got := partialRun("run_lint", "bash_00000000", time.Second, time.Minute, p); !strings.HasPrefix(got, "[PARTIAL: run_lint is still running after 1s, the call budget, and goes on in the background as shell bash_00000000. It has printed nothing yet.]\n[NOT FINISHED.") {
		t.Errorf("nothing printed:\n%s", got)
	}
	p.add("go vet", "# example.com/p")
	p.add("go vet", "")
	if got := partialRun("run_lint", "bash_00000000", time.Second, time.Minute, p); !strings.Contains(got, " Its output so far (go vet):]\n# example.com/p\n[NOT FINISHED.") {
		t.Errorf("one line:\n%s", got)
	}
	for i := range 30 {
		p.add("staticcheck", strings.Repeat("x", i*20))
	}
	got := partialRun("run_lint", "bash_00000000", time.Second, time.Minute, p)
	if !strings.Contains(got, " The last 20 lines of its output so far (staticcheck):]\n"+strings.Repeat("x", 200)+"\n") ||
		!strings.Contains(got, "\n"+strings.Repeat("x", 300)+" [...]\n[NOT FINISHED.") || strings.Contains(got, "go vet") {
		t.Errorf("thirty lines:\n%s", got)
	}
}

// sleeper writes its shell's PID and its child's to pids, then waits.
const sleeper = "echo $$ >> pids; sleep 60 & echo $! >> pids; wait"

// sleepyProject is a Go module whose one test writes its process's PID
// to pids (at the module root) and sleeps.
var sleepyProject = map[string]string{
	"go.mod": "module example.com/sleepy\n\ngo 1.22\n",
	"sleepy_test.go": `package sleepy

import (
	"os"
	"strconv"
	"testing"
	"time"
)

func TestSleeps(t *testing.T) {
	f, err := os.OpenFile("pids", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	f.Close()
	for _, err := os.Stat("go"); err != nil; _, err = os.Stat("go") {
		time.Sleep(10 * time.Millisecond)
	}
}
`,
}

// goProject writes files into a fresh workspace and returns a Config for
// it whose commands find the go toolchain and its shared build cache,
// fetching nothing.
func goProject(t *testing.T, files map[string]string) Config {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Config{
		Workspaces: []Workspace{{Dir: dir}},
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C",
			"GOCACHE=" + goEnv(t, "GOCACHE"), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
		},
	}
}

// TestRunsWaitForTheGoCacheSeed: while the Go build cache is being
// seeded a run starts nothing; past the budget it says what it waits
// for, and once the seed is in it runs as usual.
func TestRunsWaitForTheGoCacheSeed(t *testing.T) {
	t.Parallel()
	cfg := goProject(t, sleepyProject)
	cfg.CallBudget = testBudget
	seeded := make(chan struct{})
	cfg.GoCacheSeeded = seeded
	d := startDaemon(t, cfg)
	cs := d.connect(t, streamable)
	got := ok(t, cs, "run_tests", nil)
	id := shellOf(t, got)
	if want := " Its output so far (sandboxd):]\nwaiting for the seed of the Go build cache to be copied in\n[NOT FINISHED."; !strings.Contains(got, want) {
		t.Errorf("partial answer:\n%s\nwant it to hold %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "pids")); !os.IsNotExist(err) {
		t.Errorf("the test ran before the seed was in: %v", err)
	}
	close(seeded)
	os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o644)
	status, printed := waitShell(t, cs, id)
	if status != "Status: finished" || !strings.HasPrefix(printed, "--- stdout ---\nno findings; go test exited 0 (1 passed, 0 failed, 0 skipped)") {
		t.Errorf("the report: %q\n%s", status, printed)
	}
}
