package shell

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// requireIsolation skips where the kernel has no Landlock, saying so;
// in CI it must be there.
func requireIsolation(t *testing.T) {
	t.Helper()
	if err := IsolationAvailable(); err != nil {
		ci.Skipf(t, "no isolation (Landlock) on this host: %v", err)
	}
}

// TestIsolatedCallsCannotReadEachOther: a secret in the environment of
// one isolated call's background process is out of reach of a later
// isolated call of the same user, which still sees and signals the
// process; a call still reads its own children's environment; and an
// unisolated reader, the control, does read it.
func TestIsolatedCallsCannotReadEachOther(t *testing.T) {
	requireIsolation(t)
	const secret = "SECRET_VALUE_93f1c7"
	// Root's CAP_SYS_PTRACE passes over Landlock's ptrace rule, so as
	// root the calls run as another user, as sandboxd's --run-as has them.
	users := map[string]*syscall.Credential{"host-user": nil}
	if os.Getuid() == 0 {
		users = map[string]*syscall.Credential{"other-user": {Uid: nobody, Gid: nobody}}
	}
	for name, cred := range users {
		t.Run(name, func(t *testing.T) {
			forEachContainment(t, func(t *testing.T) {
				opts := Options{Timeout: time.Minute, Isolated: true, Credential: cred}
				holder := sandbox.Request{Command: "sleep", Args: []string{"60"}, Env: []string{"THE_SECRET=" + secret}}
				p, err := Start(context.Background(), holder, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					p.Stop()
					_, _ = p.Wait()
				}()
				pid := sleeperPID(t, p)

				read := `cat /proc/` + pid + `/environ 2>&1 | tr '\0' '\n'; ` +
					`kill -0 ` + pid + ` && echo signalled; ` +
					`grep -c '^State' /proc/` + pid + `/status`
				resp, err := Run(context.Background(), sh(read), opts)
				if err != nil {
					t.Fatalf("reader: %v", err)
				}
				out := string(resp.Stdout)
				if strings.Contains(out, secret) {
					t.Fatalf("an isolated call read another's environment:\n%s", out)
				}
				if !strings.Contains(out, "Permission denied") || !strings.Contains(out, "signalled\n1\n") {
					t.Errorf("reader's output = %q, want the environment refused, the process signalled and its status read", out)
				}

				own, err := Run(context.Background(), sh(`THE_SECRET=`+secret+` sleep 5 & sleep 0.2; tr '\0' '\n' </proc/$!/environ; kill $!`), opts)
				if err != nil || !strings.Contains(string(own.Stdout), "THE_SECRET="+secret) {
					t.Errorf("a call reading its own child's environment: err %v, stdout %q", err, own.Stdout)
				}

				control := opts
				control.Isolated = false
				ctl, err := Run(context.Background(), sh(`tr '\0' '\n' </proc/`+pid+`/environ`), control)
				if err != nil || !strings.Contains(string(ctl.Stdout), "THE_SECRET="+secret) {
					t.Errorf("control (not isolated) reading the environment: err %v, stdout %q", err, ctl.Stdout)
				}
			})
		})
	}
}

// sleeperPID is the PID of the sleep p runs: the leader itself, or the
// supervisor's child.
func sleeperPID(t *testing.T, p *Process) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if pid := p.Pid(); pid > 0 {
			if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && string(comm) == "sleep\n" {
				return strconv.Itoa(pid)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no sleep process for pid %d", p.Pid())
	return ""
}

// TestIsolatedProcessKeepsItsParentDeathSignal: the thread that forked
// an isolated process lives as long as the process, so the parent-death
// signal Linux ties to it does not fire early.
func TestIsolatedProcessKeepsItsParentDeathSignal(t *testing.T) {
	requireIsolation(t)
	t.Setenv(ContainmentEnv, string(ContainGroup))
	p, err := Start(context.Background(), sh(`sleep 1; echo alive`), Options{Timeout: time.Minute, Isolated: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Wait()
	if err != nil || string(resp.Stdout) != "alive\n" {
		t.Fatalf("err %v, stdout %q; want the process to live its second", err, resp.Stdout)
	}
}

// TestIsolatedProcessRenamesAcrossDirectories: the domain denies
// nothing a build does. A Landlock ruleset that does not handle REFER
// would refuse these with EXDEV (cargo failed so: "Invalid cross-device
// link").
func TestIsolatedProcessRenamesAcrossDirectories(t *testing.T) {
	requireIsolation(t)
	dir := t.TempDir()
	resp, err := Run(context.Background(), sh(`cd "$1" && mkdir a b && echo x >a/f && mv a/f b/f && ln b/f a/g && mv a b/a && cat b/a/g && ls b`, dir),
		Options{Timeout: time.Minute, Isolated: true})
	if err != nil || string(resp.Stdout) != "x\na\nf\n" {
		t.Fatalf("err %v, stdout %q, stderr %q", err, resp.Stdout, resp.Stderr)
	}
}
