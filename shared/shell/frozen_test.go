package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// tracer ptrace-attaches to every thread of the PID in argv[1] (a Go
// supervisor runs on several: one stopped thread would not stop it),
// waits until they are stopped, appends its own PID to argv[2] and
// sleeps: it holds the process in ptrace-stop for as long as it lives.
const tracer = `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = sys.argv[1]
for tid in os.listdir("/proc/%s/task" % pid):
    if libc.ptrace(16, int(tid), None, None) != 0:
        sys.exit("PTRACE_ATTACH: " + os.strerror(ctypes.get_errno()))
    os.waitpid(int(tid), 0x40000000)
with open(sys.argv[2], "a") as f:
    f.write("%d\n" % os.getpid())
time.sleep(120)
`

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
// itself, asking nothing of a process the command can stop.
func TestFrozenLeaderIsKilled(t *testing.T) {
	forEachContainment(t, func(t *testing.T) {
		for _, f := range freezes {
			for _, end := range []string{"timeout", "Stop"} {
				t.Run(f.name+"/"+end, func(t *testing.T) { testFrozenLeader(t, f.script, f.pids, end) })
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
	t.Setenv("FREEZE_SUPERVISED", supervised)
	script := `T=$$; [ -n "$FREEZE_SUPERVISED" ] && T=$PPID
echo "$T" > "$2"
setsid sleep 120 & echo $! >> "$1"
echo $$ >> "$1"
` + freeze
	req := sh(script, pids, target, tracer)
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
	waitFrozen(t, frozen.PID)
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

// waitFrozen waits until pid is stopped (T) or ptrace-stopped (t).
func waitFrozen(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, state, _, ok := proctest.Stat(pid)
		if ok && strings.IndexByte("Tt", state) >= 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never stopped (state %q)", pid, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
