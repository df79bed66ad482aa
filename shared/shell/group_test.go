package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// treeStart starts a child and a grandchild that would sleep for two
// minutes and records every PID of the tree (leader included) in $1. Every
// process holds stdout. treeScript then waits for them.
const (
	treeStart = `
echo $$ >> "$1"
sleep 120 & echo $! >> "$1"
sh -c 'sleep 120 & echo $! >> "$1"; wait' sh "$1" & echo $! >> "$1"
`
	treeScript = treeStart + "wait\n"
)

const treeSize = 4

// slack absorbs scheduling delays on a loaded machine in upper bounds.
const slack = 3 * time.Second

// shortWait is how long a test lets a call run before its timeout or
// kill: full, or under -short the shorter wait, which still leaves the
// command time to set itself up first.
func shortWait(full, short time.Duration) time.Duration {
	if testing.Short() {
		return short
	}
	return full
}

// startTree starts script with the PID file as $1 and returns the process
// and the identities of its tree once all of it runs.
func startTree(t *testing.T, ctx context.Context, script string, opts Options, timeout time.Duration) (*Process, []proctest.ID) {
	t.Helper()
	file := pidFile(t)
	req := sh(script, file)
	req.Timeout = timeout
	p, err := Start(ctx, req, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Stop(); p.Wait() })
	return p, proctest.Identify(t, proctest.ReadPIDs(t, file, treeSize)...)
}

func TestTimeoutKillsProcessTree(t *testing.T) {
	t.Parallel() // seconds of waiting on its own process tree
	const timeout = 2 * time.Second
	start := time.Now()
	p, tree := startTree(t, context.Background(), treeScript, Options{}, timeout)
	resp, err := p.Wait()
	elapsed := time.Since(start)

	if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Kind != sandbox.KindTimeout {
		t.Fatalf("err = %#v, want a *sandbox.Error of KindTimeout", err)
	}
	if !strings.Contains(err.Error(), "timed out after 2s") {
		t.Errorf("message %q does not say how long", err.Error())
	}
	checkErrSame(t, resp, err)
	if elapsed < timeout || elapsed > timeout+DefaultKillGrace+slack {
		t.Errorf("returned after %v, want about %v", elapsed, timeout)
	}
	proctest.AssertGone(t, tree...)
}

func TestTimeoutEscalatesToSIGKILL(t *testing.T) {
	t.Parallel() // seconds of waiting on its own process tree
	const timeout, grace = time.Second, 400 * time.Millisecond
	start := time.Now()
	p, tree := startTree(t, context.Background(), `trap '' TERM`+treeScript, Options{KillGrace: grace}, timeout)
	_, err := p.Wait()
	elapsed := time.Since(start)

	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if elapsed < timeout+grace {
		t.Errorf("returned after %v, before the grace of %v had passed", elapsed, grace)
	}
	if elapsed > timeout+grace+slack {
		t.Errorf("returned after %v, want about %v", elapsed, timeout+grace)
	}
	proctest.AssertGone(t, tree...)
}

func TestTimeoutLetsProcessExitGracefully(t *testing.T) {
	t.Parallel() // seconds of waiting on its own process tree
	const timeout = 500 * time.Millisecond
	req := sh(`trap 'echo bye; exit 0' TERM; echo hi; sleep 120 & wait`)
	req.Timeout = timeout
	start := time.Now()
	resp, err := Run(context.Background(), req, Options{KillGrace: time.Minute})
	elapsed := time.Since(start)

	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout even though the process exited 0 on SIGTERM", err)
	}
	if got := string(resp.Stdout); got != "hi\nbye\n" {
		t.Errorf("stdout = %q, want %q", got, "hi\nbye\n")
	}
	if elapsed > timeout+slack {
		t.Errorf("returned after %v; a process that exits on SIGTERM must not wait out the grace", elapsed)
	}
}

func TestCancelKillsProcessTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, tree := startTree(t, ctx, treeScript, Options{}, time.Minute)
	cancel()
	start := time.Now()
	resp, err := p.Wait()

	if !errors.Is(err, context.Canceled) || !errors.Is(err, sandbox.ErrCanceled) || errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	checkErrSame(t, resp, err)
	if d := time.Since(start); d > DefaultKillGrace+slack {
		t.Errorf("Wait took %v after cancel", d)
	}
	proctest.AssertGone(t, tree...)
}

func TestStopKillsProcessTree(t *testing.T) {
	p, tree := startTree(t, context.Background(), treeScript, Options{}, time.Minute)
	p.Stop()
	_, err := p.Wait()
	if sandbox.KindOf(err) != sandbox.KindCanceled {
		t.Fatalf("err = %v, want KindCanceled", err)
	}
	proctest.AssertGone(t, tree...)
}

// A leader that exits while a background child still holds stdout gets its
// own result back at once; the child dies with the call.
func TestExitKillsBackgroundChildren(t *testing.T) {
	for _, tc := range []struct {
		exit string
		want error
	}{
		{"exit 0", nil},
		{"exit 3", &sandbox.ExitError{Code: 3}},
	} {
		t.Run(tc.exit, func(t *testing.T) {
			dir := t.TempDir()
			pids, release := filepath.Join(dir, "pids"), filepath.Join(dir, "release")
			script := treeStart + `
echo out
while [ ! -e "$2" ]; do sleep 0.01; done
` + tc.exit
			// An OrphanWait far beyond the bound below proves the pipes
			// closed because the group died, not because we gave up.
			p, err := Start(context.Background(), sh(script, pids, release), Options{OrphanWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			tree := proctest.Identify(t, proctest.ReadPIDs(t, pids, treeSize)...)
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := p.Wait()
			if d := time.Since(start); d > slack {
				t.Errorf("Wait took %v after the leader was released", d)
			}
			if tc.want == nil && err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			if tc.want != nil {
				var xe *sandbox.ExitError
				if !errors.As(err, &xe) || *xe != *tc.want.(*sandbox.ExitError) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			}
			if got := string(resp.Stdout); got != "out\n" {
				t.Errorf("stdout = %q, want %q", got, "out\n")
			}
			proctest.AssertGone(t, tree...)
		})
	}
}

// Uncontained, a descendant that left the group cannot be killed from
// here; holding the pipes, it delays the call by OrphanWait and no more.
func TestUncontainedEscapedDescendantDelaysByOrphanWaitOnly(t *testing.T) {
	const orphanWait = 400 * time.Millisecond
	file := pidFile(t)
	script := `setsid sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 120' sh "$1" &
while [ ! -s "$1" ]; do sleep 0.01; done
echo done`
	start := time.Now()
	resp, err := Run(context.Background(), sh(script, file), Options{OrphanWait: orphanWait, Uncontained: true})
	elapsed := time.Since(start)
	proctest.Identify(t, proctest.ReadPIDs(t, file, 1)...) // still running: the documented limit; cleanup kills it

	if err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
	if got := string(resp.Stdout); got != "done\n" {
		t.Errorf("stdout = %q, want %q", got, "done\n")
	}
	if elapsed < orphanWait || elapsed > orphanWait+slack {
		t.Errorf("returned after %v, want about %v", elapsed, orphanWait)
	}
}

// The leader dies with its host even when the host is SIGKILLed and gets
// no chance to clean up.
func TestHostDeathKillsProcess(t *testing.T) {
	file := pidFile(t)
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), roleEnv+"=pdeathsig-host", "PIDFILE="+file)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	child := proctest.Identify(t, proctest.ReadPIDs(t, file, 1)...)

	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	proctest.AssertGone(t, child...)
}

// pidFile names a fresh file for a script to record PIDs in.
func pidFile(t *testing.T) string {
	return filepath.Join(t.TempDir(), "pids")
}
