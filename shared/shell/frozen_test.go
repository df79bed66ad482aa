package shell

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The ways a command freezes the process the host waits for ($T: its
// supervisor, or itself when there is none), once it has recorded its
// tree in $1, and how many PIDs it records in all.
var freezes = []struct {
	name   string
	script string
	pids   int
}{
	{"SIGSTOP", `kill -STOP "$T"; exec sleep 120`, 2},
	{"SIGSTOP of the group", `kill -STOP 0; exec sleep 120`, 2},
	{"ptrace", `python3 -c "$3" "$T" "$1" & exec sleep 120`, 3},
}

// A command that freezes its supervisor (or, uncontained by one,
// itself), with SIGSTOP or a ptrace attach, cannot make the host wait:
// a timeout, or Stop, ends the call within the kill grace, and nothing
// of it is left, what left its group included. The host kills the tree
// itself, asking nothing of a process the command can stop. The calls
// under one containment run side by side: most of their time is the
// wait for a timeout.
func TestFrozenLeaderIsKilled(t *testing.T) {
	forEachContainment(t, func(t *testing.T) {
		for _, f := range freezes {
			for _, end := range []string{"timeout", "Stop"} {
				t.Run(f.name+"/"+end, func(t *testing.T) {
					t.Parallel()
					if f.name == "ptrace" {
						proctest.RequirePtrace(t)
					}
					testFrozenLeader(t, f.script, f.pids, end)
				})
			}
		}
	})
}

func testFrozenLeader(t *testing.T, freeze string, npids int, end string) {
	dir := t.TempDir()
	pids, target := filepath.Join(dir, "pids"), filepath.Join(dir, "target")
	// Under a supervisor, the command's parent is the supervisor; in a
	// cgroup, the host waits for the command itself.
	supervised := ""
	if os.Getenv(ContainmentEnv) == string(ContainSupervisor) {
		supervised = "1"
	}
	script := `T=$$; [ -n "$4" ] && T=$PPID
echo "$T" > "$2"
setsid sleep 120 & echo $! >> "$1"
echo $$ >> "$1"
` + freeze
	req := sh(script, pids, target, proctest.Tracer, supervised)
	const timeout, grace = 1 * time.Second, 200 * time.Millisecond
	if end == "timeout" {
		req.Timeout = timeout
	} else {
		req.Timeout = time.Minute
	}
	start := time.Now()
	p, err := Start(context.Background(), req, Options{KillGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	tree := proctest.Identify(t, proctest.ReadPIDs(t, pids, npids)...)
	frozen := proctest.Identify(t, proctest.ReadPIDs(t, target, 1)...)[0]
	proctest.WaitStopped(t, frozen.PID)
	if end == "Stop" {
		start = time.Now()
		p.Stop()
	}

	done := make(chan error, 1)
	go func() { _, err := p.Wait(); done <- err }()
	bound := grace + slack
	if end == "timeout" {
		bound += timeout
	}
	select {
	case err = <-done:
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("Wait still waits %v after the %s (the kill was due after %v)", time.Since(start), end, bound-slack)
	}
	if d := time.Since(start); d > bound {
		t.Errorf("Wait returned %v after the start of the %s, want at most %v", d, end, bound)
	}
	want := sandbox.KindTimeout
	if end == "Stop" {
		want = sandbox.KindCanceled
	}
	if got := sandbox.KindOf(err); got != want {
		t.Errorf("err = %v (%s), want %s", err, got, want)
	}
	proctest.AssertGone(t, append(tree, frozen)...)
}

// A leader the host has killed, but that a tracer outside the call
// holds (a zombie only the tracer sees), does not hold Wait past
// reapWithin; it is reaped once the tracer lets go.
func TestLeaderHeldByOutsideTracer(t *testing.T) {
	proctest.RequirePtrace(t)
	forEachContainment(t, func(t *testing.T) {
		dir := t.TempDir()
		pids, traced := filepath.Join(dir, "pids"), filepath.Join(dir, "traced")
		timeout, grace := shortWait(2*time.Second, time.Second), 200*time.Millisecond
		req := sh(`echo $$ $PPID >> "$1"; exec sleep 120`, pids)
		req.Timeout = timeout
		start := time.Now()
		p, err := Start(context.Background(), req, Options{KillGrace: grace})
		if err != nil {
			t.Fatal(err)
		}
		ids := proctest.ReadPIDs(t, pids, 2)
		leader := ids[0]
		if os.Getenv(ContainmentEnv) == string(ContainSupervisor) {
			leader = ids[1]
		}
		proctest.Identify(t, ids[0], leader)

		tr, err := Start(context.Background(), sandbox.Request{
			Command: "python3", Args: []string{"-c", proctest.Tracer, strconv.Itoa(leader), traced},
		}, Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Stop(); tr.Wait() })
		proctest.ReadPIDs(t, traced, 1)

		_, err = p.Wait()
		if got := sandbox.KindOf(err); got != sandbox.KindTimeout {
			t.Errorf("err = %v (%s), want a timeout", err, got)
		}
		if d, bound := time.Since(start), timeout+grace+reapWithin+slack; d > bound {
			t.Errorf("Wait returned after %v, want at most %v", d, bound)
		}
		tr.Stop()
		tr.Wait()
		// Reaped, not a zombie: gone from /proc.
		deadline := time.Now().Add(5 * time.Second)
		for _, _, _, ok := proctest.Stat(leader); ok; _, _, _, ok = proctest.Stat(leader) {
			if time.Now().After(deadline) {
				t.Fatalf("the leader %d was never reaped", leader)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// The command runs from the moment its supervisor forks it, and may stop
// the supervisor before it reports the command's start: the start does
// not wait for the report then, and the call ends at its timeout. The
// race is the command's to win often, so it is run many times (fewer
// under -short: each run waits out its timeout).
func TestSupervisorStoppedBeforeReport(t *testing.T) {
	t.Setenv(ContainmentEnv, string(ContainSupervisor))
	const timeout, grace = 300 * time.Millisecond, 10 * time.Millisecond
	runs := 30
	if testing.Short() {
		runs = 8
	}
	for i := range runs {
		pids := pidFile(t)
		req := sh(`kill -STOP $PPID; echo $$ $PPID >> "$1"; exec sleep 120`, pids)
		req.Timeout = timeout
		start := time.Now()
		_, err := Run(context.Background(), req, Options{KillGrace: grace})
		if got := sandbox.KindOf(err); got != sandbox.KindTimeout {
			t.Errorf("run %d: err = %v (%s), want a timeout", i, err, got)
		}
		if d := time.Since(start); d > timeout+grace+slack {
			t.Fatalf("run %d: Run returned after %v, want at most %v", i, d, timeout+grace+slack)
		}
		b, _ := os.ReadFile(pids)
		for f := range strings.FieldsSeq(string(b)) {
			pid, _ := strconv.Atoi(f)
			proctest.Gone(t, "a process of run "+strconv.Itoa(i), pid)
		}
	}
}
