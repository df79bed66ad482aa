package shells

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

const testBudget = 300 * time.Millisecond

var partialRE = regexp.MustCompile(`(?s)^\[PARTIAL OUTPUT: the command is still running after 300ms, the call budget, and goes on in the background as shell (bash_[0-9a-f]{8})\. Its output so far:\]\n(.*)\n\[NOT FINISHED\. Next: call BashOutput with bash_id "(bash_[0-9a-f]{8})" for what it prints from now on and, once it has ended, its exit code; call it again while the status is "running"\. To stop it, call KillShell with shell_id "(bash_[0-9a-f]{8})"\. Its timeout still applies: it is killed (\S+) after it started\.\]$`)

// detached parses a partial answer: the shell's ID and the output so far.
func detached(t *testing.T, out string) (id, so string) {
	t.Helper()
	m := partialRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("not a partial answer: %q", out)
	}
	if m[1] != m[3] || m[1] != m[4] {
		t.Fatalf("the answer names several shells: %q", out)
	}
	return m[1], m[2]
}

// TestBudgetHandsOverARunningCommand: a command that outlives the budget
// answers with what it printed so far and goes on as a background shell,
// whose output picks up where the answer ended.
func TestBudgetHandsOverARunningCommand(t *testing.T) {
	m := newManager(t, Options{Budget: testBudget})
	began := time.Now()
	out := bash(t, m, Command{Command: "echo before; echo warn >&2; " + gate + "; echo after; exit 3"})
	if el := time.Since(began); el < testBudget || el > testBudget+2*time.Second {
		t.Errorf("answered after %s, want about %s", el, testBudget)
	}
	id, so := detached(t, out)
	if want := "before\n--- stderr ---\nwarn"; so != want {
		t.Errorf("output so far %q, want %q", so, want)
	}
	if !strings.HasSuffix(out, "killed 2m0s after it started.]") {
		t.Errorf("the default timeout is not named: %q", out)
	}
	if got, want := output(t, m, id, ""), "Status: running\n(no new output)"; got != want {
		t.Errorf("while it waits: %q, want %q", got, want)
	}
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	if got, want := output(t, m, id, ""), "Status: exited with code 3\n--- stdout ---\nafter"; got != want {
		t.Errorf("after it ended: %q, want %q", got, want)
	}
	if n := m.Active(); n != 0 {
		t.Errorf("%d commands still active", n)
	}
}

// TestBudgetLeavesShortTimeoutsAlone: a call whose timeout is within the
// budget runs as it always has, to its timeout.
func TestBudgetLeavesShortTimeoutsAlone(t *testing.T) {
	m := newManager(t, Options{Budget: 2 * time.Second})
	out := bash(t, m, Command{Command: "echo hi; sleep 60", Timeout: testBudget})
	if want := "hi\nCommand timed out after 300ms"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	if got := bash(t, m, Command{Command: "echo quick"}); got != "quick\n" {
		t.Errorf("a quick command under a budget: %q", got)
	}
}

// TestBudgetKeepsTheTimeout: a handed-over command is still killed, with
// its group, at the timeout it was given.
func TestBudgetKeepsTheTimeout(t *testing.T) {
	m := newManager(t, Options{Budget: testBudget})
	out := bash(t, m, Command{Command: "sleep 60 & echo $! >> pids; echo $$ >> pids; wait", Timeout: 900 * time.Millisecond})
	id, so := detached(t, out)
	if so != "(no output yet)" {
		t.Errorf("output so far %q", so)
	}
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	waitDone(t, m, id)
	proctest.AssertGone(t, ids...)
	if got, want := output(t, m, id, ""), "Status: timed out after 900ms and was killed\n(no new output)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBudgetKillShell: KillShell on a handed-over command kills its
// whole process group.
func TestBudgetKillShell(t *testing.T) {
	m := newManager(t, Options{Budget: testBudget})
	out := bash(t, m, Command{Command: "(sleep 60 & echo $! >> pids; wait) & echo $$ >> pids; sleep 60", Owner: "s1"})
	id, _ := detached(t, out)
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	if _, err := m.Output("s2", id, ""); err == nil {
		t.Errorf("another owner reads the shell")
	}
	if got, err := m.Kill("s1", id); err != nil || got != "Killed background shell "+id {
		t.Errorf("Kill: %q, %v", got, err)
	}
	proctest.AssertGone(t, ids...)
}

// TestBudgetForgetKillsHandedOver: the owner's end kills what it handed
// over, as it kills its background shells.
func TestBudgetForgetKillsHandedOver(t *testing.T) {
	m := newManager(t, Options{Budget: testBudget})
	out := bash(t, m, Command{Command: "sleep 60 & echo $! >> pids; echo $$ >> pids; wait", Owner: "s1"})
	id, _ := detached(t, out)
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	m.Forget("s1")
	proctest.AssertGone(t, ids...)
	if m.Has("s1", id) {
		t.Errorf("%s is still known", id)
	}
}

// TestBudgetCallerCancelKillsTheGroup: before the budget, the call's end
// still kills the command (it runs on a context of its own).
func TestBudgetCallerCancelKillsTheGroup(t *testing.T) {
	m := newManager(t, Options{Budget: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Bash(ctx, Command{Command: `sleep 60 & echo $! >> pids; echo $$ >> pids; sleep 60`})
		done <- err
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want a cancellation", err)
	}
	proctest.AssertGone(t, ids...)
	if n := m.Active(); n != 0 {
		t.Errorf("%d commands still active", n)
	}
}

// TestBudgetSecretSplitAtTheHandover: a line cut by the handover reaches
// the scrubber whole, and shows once, in the background shell's output.
func TestBudgetSecretSplitAtTheHandover(t *testing.T) {
	m := newManager(t, Options{Budget: testBudget, Scrubber: scrub.New(map[string]string{"X": "s3cr3t-value-123"})})
	out := bash(t, m, Command{Command: "echo first; printf 'key=s3cr3t-'; " + gate + "; printf 'value-123 end\n'"})
	_, so := detached(t, out)
	if so != "first" {
		t.Errorf("output so far %q, want the whole lines only", so)
	}
	id, _ := detached(t, out)
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	if got, want := output(t, m, id, ""), "Status: exited with code 0\n--- stdout ---\nkey=[REDACTED:secret:X] end"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBudgetCloseKillsHandedOver: Close kills a handed-over command too.
func TestBudgetCloseKillsHandedOver(t *testing.T) {
	m := New(Options{Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Budget: testBudget})
	out, err := m.Bash(context.Background(), Command{Command: "sleep 60 & echo $! >> pids; echo $$ >> pids; wait"})
	if err != nil {
		t.Fatal(err)
	}
	detached(t, out)
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	m.Close()
	proctest.AssertGone(t, ids...)
}

func TestAdoptedJob(t *testing.T) {
	m := newManager(t, Options{Scrubber: scrub.New(map[string]string{"X": "s3cr3t-value-123"})})
	id, finish, err := m.Adopt("s1", "run_tests", func() { t.Error("a finished job was stopped") })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustOutput(t, m, "s1", id), "Status: running\n(no new output)"; got != want {
		t.Errorf("running: %q, want %q", got, want)
	}
	if err := finish("2 passed\nkey s3cr3t-value-123", nil); err != nil {
		t.Fatal(err)
	}
	if err := finish("again", nil); err == nil {
		t.Error("a second finish was taken")
	}
	waitDone(t, m, id)
	if got, want := mustOutput(t, m, "s1", id), "Status: finished\n--- stdout ---\n2 passed\nkey [REDACTED:secret:X]"; got != want {
		t.Errorf("finished: %q, want %q", got, want)
	}

	id, finish, _ = m.Adopt("s1", "run_lint", func() {})
	finish("", errors.New("no supported project found"))
	waitDone(t, m, id)
	if got, want := mustOutput(t, m, "s1", id), "Status: failed\n--- stdout ---\nno supported project found"; got != want {
		t.Errorf("failed: %q, want %q", got, want)
	}
}

func TestAdoptedJobKill(t *testing.T) {
	m := newManager(t, Options{})
	stopped := make(chan struct{})
	var finish func(string, error) error
	id, finish, err := m.Adopt("s1", "run_tests", func() { close(stopped) })
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-stopped // the work sees its context end, and returns
		finish("go test: context canceled", errors.New("canceled"))
	}()
	if got, err := m.Kill("s1", id); err != nil || got != "Killed background shell "+id {
		t.Errorf("Kill: %q, %v", got, err)
	}
	if got, want := mustOutput(t, m, "s1", id), "Status: killed\n(no new output)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	id, finish, _ = m.Adopt("s2", "run_tests", func() { go finish("", context.Canceled) })
	m.Forget("s2")
	if m.Has("s2", id) {
		t.Errorf("a forgotten owner's job is still known")
	}
}

func mustOutput(t *testing.T, m *Manager, owner, id string) string {
	t.Helper()
	out, err := m.Output(owner, id, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
