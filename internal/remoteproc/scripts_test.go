package remoteproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// shells are the POSIX shells the wrapper is proven with: the system's
// /bin/sh (dash on Debian) and busybox, which minimal images carry.
func shells(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{"sh": {"/bin/sh"}}
	if bb, err := exec.LookPath("busybox"); err == nil {
		out["busybox"] = []string{bb, "sh"}
	} else {
		ci.DoWithout(t, fmt.Sprintf("busybox is not installed, so only /bin/sh is tested (install busybox-static): %v", err))
	}
	return out
}

type result struct {
	stdout, stderr string
	code           int
	f              *Filter
}

// run runs the wrapper locally, with sh as /bin/sh, as it would run
// remotely, feeding it stdin (a preamble first, normally).
func run(t *testing.T, sh []string, stdin []byte) result {
	t.Helper()
	argv := Argv()
	var stdout, stderr bytes.Buffer
	f := NewFilter(&stdout, &stderr, false)
	cmd := exec.Command(sh[0], append(sh[1:], argv[1:]...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = f.Stdout(), f.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	f.Close()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code, f}
}

func preamble(t *testing.T, command string, args []string, env ...string) []byte {
	t.Helper()
	p, err := Preamble(command, args, env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWrapperRunsCommand(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			in := append(preamble(t, "/bin/sh", []string{"-c", `cat; echo err >&2; exit 3`}), "hello\nworld"...)
			r := run(t, sh, in)
			if r.stdout != "hello\nworld" || r.stderr != "err\n" || r.code != 3 {
				t.Fatalf("got %+v", r)
			}
			if code, ok := r.f.ExitCode(); !ok || code != 3 {
				t.Errorf("ExitCode = %d, %v", code, ok)
			}
			if r.f.PID() <= 0 || r.f.NotFound() || !r.f.Ran() {
				t.Errorf("PID %d, NotFound %v", r.f.PID(), r.f.NotFound())
			}
		})
	}
}

func TestWrapperEnvironment(t *testing.T) {
	values := map[string]string{
		"PLAIN":     "value",
		"SPACES":    "  two  spaces  ",
		"NEWLINES":  "line1\nline2\n\n",
		"BACKSLASH": `a\b\\c\nd\0101\c`,
		"PERCENT":   "100% %s %b",
		"QUOTES":    `'single' "double" $(not run) ` + "`nor this`",
		"EMPTY":     "",
		"EQUALS":    "a=b=c",
		"UNICODE":   "héllo — 世界",
		"CONTROL":   "\x1e\t\r\x7f",
	}
	var env []string
	for k, v := range values {
		env = append(env, k+"="+v)
	}
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			for k, want := range values {
				r := run(t, sh, preamble(t, "/bin/sh", []string{"-c", `printf %s "$` + k + `"`}, env...))
				if r.code != 0 || r.stdout != want {
					t.Errorf("%s = %q (exit %d, stderr %q), want %q", k, r.stdout, r.code, r.stderr, want)
				}
			}
		})
	}
}

func TestWrapperPathFromEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "my-hook"), []byte("#!/bin/sh\necho from-my-hook\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			r := run(t, sh, preamble(t, "my-hook", nil, "PATH="+dir+":/usr/bin:/bin"))
			if r.code != 0 || r.stdout != "from-my-hook\n" || r.f.NotFound() {
				t.Fatalf("got %+v notfound=%v", r, r.f.NotFound())
			}
		})
	}
}

func TestWrapperNotFound(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			for _, cmd := range []string{"no-such-command-pks", "/no/such/path", "/etc"} {
				r := run(t, sh, preamble(t, cmd, nil))
				if r.code != 127 || !r.f.NotFound() || r.stdout != "" || r.stderr != "" {
					t.Errorf("%s: got %+v notfound=%v", cmd, r, r.f.NotFound())
				}
			}
		})
	}
}

// TestWrapperDrainsUnreadStdin: the wrapper reads the stdin its command
// left, so the exec's client is done sending before the stream ends,
// whatever PATH the call sets.
func TestWrapperDrainsUnreadStdin(t *testing.T) {
	unread := bytes.Repeat([]byte("x"), 1<<20)
	for name, sh := range shells(t) {
		for _, tc := range []struct {
			name string
			in   []byte
			code int
		}{
			{"ran", preamble(t, "/bin/sh", []string{"-c", "printf ignored; exit 5"}, "PATH=/nowhere"), 5},
			{"notfound", preamble(t, "no-such-command-pks", nil), 127},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				stdin := bytes.NewReader(append(tc.in, unread...))
				argv := Argv()
				var stdout, stderr bytes.Buffer
				f := NewFilter(&stdout, &stderr, false)
				cmd := exec.Command(sh[0], append(sh[1:], argv[1:]...)...)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, f.Stdout(), f.Stderr()
				err := cmd.Run()
				f.Close()
				var xe *exec.ExitError
				if !errors.As(err, &xe) || xe.ExitCode() != tc.code || stdin.Len() != 0 || stderr.Len() != 0 {
					t.Fatalf("err %v, %d bytes of stdin unread, stderr %q; want exit %d, all read, no stderr",
						err, stdin.Len(), stderr.String(), tc.code)
				}
			})
		}
	}
}

func TestWrapperAbandoned(t *testing.T) {
	// End of file before the go line: nothing runs.
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			whole := preamble(t, "/bin/sh", []string{"-c", "touch " + marker}, "A=1")
			r := run(t, sh, whole[:len(whole)-1])
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("got %+v", r)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
			if _, ok := r.f.ExitCode(); ok || r.f.Ran() {
				t.Error("an exit or a run was reported")
			}
		})
	}
}

func TestWrapperArguments(t *testing.T) {
	args := []string{"", "two  spaces", "line1\nline2\n", `back\slash\n`, "$HOME", "'q'", "-n", "%s", "\x1epks:exit:0"}
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			r := run(t, sh, preamble(t, "/bin/sh", append([]string{"-c", `for a in "$@"; do printf '[%s]' "$a"; done`, "zero"}, args...)))
			var want strings.Builder
			for _, a := range args {
				want.WriteString("[" + a + "]")
			}
			if r.code != 0 || r.stdout != want.String() {
				t.Fatalf("got %q (exit %d, stderr %q), want %q", r.stdout, r.code, r.stderr, want.String())
			}
		})
	}
}

func TestPreambleRefusesBadNames(t *testing.T) {
	for _, kv := range []string{"1A=x", "A-B=x", "=x", "A B=x", "NOEQUALS", "A=x\x00y"} {
		if _, err := Preamble("true", nil, []string{kv}); err == nil {
			t.Errorf("%q: accepted", kv)
		}
	}
	if _, err := Preamble("true", []string{"a\x00"}, nil); err == nil {
		t.Error("a NUL in an argument: accepted")
	}
	if _, err := Preamble("true", nil, []string{"_a1=x", "A=", "lower_case=1"}); err != nil {
		t.Error(err)
	}
}

func TestKillScriptKillsTree(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			// A command that leaves a child in its own session and one in
			// the wrapper's, then waits.
			pids := filepath.Join(t.TempDir(), "pids")
			w := startWrapper(t, sh, preamble(t, "/bin/sh", []string{"-c",
				`sleep 300 & echo $! > "$1"; setsid sleep 301 & echo $! >> "$1"; echo started; wait`, "sh", pids}))
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(stdoutOf(w.f, &w.stdout), "started") && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			// Its own children, by PID and start time: other tests may be
			// running sleeps of their own.
			children := proctest.Identify(t, proctest.ReadPIDs(t, pids, 2)...)
			w.kill(t, sh)
			proctest.AssertGone(t, children...)
		})
	}
}

// wrapper is a wrapper run locally in the background, as it would run
// remotely.
type wrapper struct {
	f              *Filter
	stdout, stderr bytes.Buffer
	cmd            *exec.Cmd
	done           chan error
}

// startWrapper starts the wrapper under sh with stdin and returns once
// it has reported its PID.
func startWrapper(t *testing.T, sh []string, stdin []byte) *wrapper {
	t.Helper()
	w := &wrapper{done: make(chan error, 1)}
	w.f = NewFilter(&w.stdout, &w.stderr, false)
	w.cmd = exec.Command(sh[0], append(sh[1:], Argv()[1:]...)...)
	w.cmd.Stdin = bytes.NewReader(stdin)
	w.cmd.Stdout, w.cmd.Stderr = w.f.Stdout(), w.f.Stderr()
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	<-w.f.Started()
	return w
}

// kill runs the kill script for the wrapper under sh and fails the test
// unless the wrapper ends.
func (w *wrapper) kill(t *testing.T, sh []string) {
	t.Helper()
	kill := KillArgv(w.f.PID())
	if out, err := exec.Command(sh[0], append(sh[1:], kill[1:]...)...).CombinedOutput(); err != nil {
		t.Fatalf("kill: %v %s", err, out)
	}
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		t.Fatal("the wrapper survived the kill script")
	}
}

func stdoutOf(f *Filter, b *bytes.Buffer) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return b.String()
}

// daemonize is a command that leaves a double-forked daemon, in a session
// of its own and out of the wrapper's tree, holding none of the call's
// streams; it writes the daemon's PID to $1 and exits 7 (or waits, with
// $2 set).
const daemonize = `(setsid sh -c 'sleep 303 & echo $! > "$1"' sh "$1" </dev/null >/dev/null 2>&1 &)
while [ ! -s "$1" ]; do sleep 0.01; done; echo started; [ -z "$2" ] || sleep 300; exit 7`

func TestWrapperSweepsDaemonsAtExit(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			r := run(t, sh, preamble(t, "/bin/sh", []string{"-c", daemonize, "sh", pids}))
			if r.code != 7 || r.stdout != "started\n" {
				t.Fatalf("got %+v", r)
			}
			// The wrapper has returned: the daemon is dead, or dying (a
			// SIGKILL takes effect asynchronously).
			for _, pid := range proctest.ReadPIDs(t, pids, 1) {
				proctest.AssertCommGone(t, pid, "sleep")
			}
		})
	}
}

func TestKillScriptKillsMarkedDaemons(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			w := startWrapper(t, sh, preamble(t, "/bin/sh", []string{"-c", daemonize, "sh", pids, "wait"}))
			daemon := proctest.Identify(t, proctest.ReadPIDs(t, pids, 1)...)
			w.kill(t, sh)
			proctest.AssertGone(t, daemon...)
		})
	}
}
