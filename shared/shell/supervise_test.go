package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// escapeStart starts the ways a process leaves its parent's group and
// parentage: a setsid child, a double-forked daemon whose parent has
// exited (so it is an orphan), and both at once with its output sent
// elsewhere, as a daemon does. Each records its PID in $1.
const (
	escapeStart = `
setsid sh -c 'echo $$ >> "$1"; exec sleep 120' sh "$1" &
(sh -c 'echo $$ >> "$1"; exec sleep 120' sh "$1" &)
(setsid sh -c 'echo $$ >> "$1"; exec sleep 120' sh "$1" >/dev/null 2>&1 </dev/null &)
`
	escapeSize = 3
)

// What a command leaves behind when it exits, however it got away, is
// killed, and the call does not wait for it.
func TestExitKillsEscapedDescendants(t *testing.T) {
	forEachContainment(t, testExitKillsEscapedDescendants)
}

func testExitKillsEscapedDescendants(t *testing.T) {
	dir := t.TempDir()
	pids, release := filepath.Join(dir, "pids"), filepath.Join(dir, "release")
	script := escapeStart + `
echo out
while [ ! -e "$2" ]; do sleep 0.01; done
exit 3`
	p, err := Start(context.Background(), sh(script, pids, release), Options{OrphanWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	escaped := proctest.Identify(t, proctest.ReadPIDs(t, pids, escapeSize)...)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := p.Wait()
	if d := time.Since(start); d > slack {
		t.Errorf("Wait took %v after the command was released", d)
	}
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || *xe != (sandbox.ExitError{Code: 3}) {
		t.Fatalf("err = %v, want exit status 3", err)
	}
	if got := string(resp.Stdout); got != "out\n" {
		t.Errorf("stdout = %q, want %q", got, "out\n")
	}
	proctest.AssertGone(t, escaped...)
}

// A timeout takes the escaped processes down with the command.
func TestTimeoutKillsEscapedDescendants(t *testing.T) {
	forEachContainment(t, testTimeoutKillsEscapedDescendants)
}

func testTimeoutKillsEscapedDescendants(t *testing.T) {
	pids := pidFile(t)
	req := sh(escapeStart+"exec sleep 120", pids)
	req.Timeout = shortWait(2*time.Second, time.Second)
	p, err := Start(context.Background(), req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	escaped := proctest.Identify(t, proctest.ReadPIDs(t, pids, escapeSize)...)
	_, err = p.Wait()
	if sandbox.KindOf(err) != sandbox.KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	proctest.AssertGone(t, escaped...)
}

// SIGKILL of the host leaves its supervisors, or its cgroups' keeper, to
// kill the escaped processes: nothing of the call outlives the host.
func TestHostDeathKillsEscapedDescendants(t *testing.T) {
	forEachContainment(t, testHostDeathKillsEscapedDescendants)
}

func testHostDeathKillsEscapedDescendants(t *testing.T) {
	file := pidFile(t)
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), roleEnv+"=escape-host", "PIDFILE="+file)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	escaped := proctest.Identify(t, proctest.ReadPIDs(t, file, escapeSize)...)

	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	proctest.AssertGone(t, escaped...)
}

// The command's own signals and exit statuses come through the
// supervisor unchanged, and Pid names the command, not the supervisor.
func TestStatusAndPid(t *testing.T) {
	forEachContainment(t, testStatusAndPid)
}

func testStatusAndPid(t *testing.T) {
	resp, err := Run(context.Background(), sh(`echo $$; kill -TERM $$`), Options{})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || *xe != (sandbox.ExitError{Code: 143, Signal: "terminated"}) {
		t.Fatalf("err = %v, want killed by SIGTERM", err)
	}
	if len(resp.Stdout) == 0 {
		t.Fatal("no PID printed")
	}

	p, err := Start(context.Background(), sh(`echo $$`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(resp.Stdout), strconv.Itoa(p.Pid())+"\n"; got != want {
		t.Errorf("the command printed PID %q; Pid() = %q", got, want)
	}
}

// A timeout's SIGTERM reaches the command once, however it is contained.
func TestTimeoutSignalsOnce(t *testing.T) {
	forEachContainment(t, func(t *testing.T) {
		req := sh(`trap 'echo term' TERM; echo hi; while :; do sleep 0.05; done`)
		req.Timeout = 300 * time.Millisecond
		resp, err := Run(context.Background(), req, Options{KillGrace: shortWait(time.Second, 500*time.Millisecond)})
		if sandbox.KindOf(err) != sandbox.KindTimeout {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if got := string(resp.Stdout); got != "hi\nterm\n" {
			t.Errorf("stdout = %q, want %q", got, "hi\nterm\n")
		}
	})
}

// A supervisor killed under the command (both run as the same user) is
// not a hang and not a success: the call reports the kill, and the
// command's group dies with it.
func TestKilledSupervisor(t *testing.T) {
	t.Setenv(ContainmentEnv, string(ContainSupervisor))
	pids := pidFile(t)
	_, err := Run(context.Background(), sh(`sleep 120 & echo $! >> "$1"; kill -KILL $PPID; wait`, pids), Options{Timeout: time.Minute})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 137 {
		t.Fatalf("err = %v, want exit status 137", err)
	}
	for _, pid := range proctest.ReadPIDs(t, pids, 1) {
		proctest.Gone(t, "the command's child", pid)
	}
}

// forEachContainment runs test under each way of containing a process
// this host offers. A host where no cgroup can be made skips that one,
// saying why, unless it is CI, which must have it.
func forEachContainment(t *testing.T, test func(t *testing.T)) {
	for _, c := range []Containment{ContainCgroup, ContainSupervisor} {
		t.Run(string(c), func(t *testing.T) {
			if c == ContainCgroup {
				cg, err := newCallCgroup()
				if err != nil {
					ci.Skipf(t, "no cgroup for a call here: %v", err)
				}
				cg.release()
			}
			t.Setenv(ContainmentEnv, string(c))
			test(t)
		})
	}
}
