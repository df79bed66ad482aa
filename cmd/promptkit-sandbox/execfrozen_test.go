package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// freeze SIGSTOPs a serve; it is continued when the test ends, before it
// is stopped (cleanups run last first).
func (s *serveProc) freeze(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) })
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// timedExec runs exec to its end and says how long it took.
func timedExec(t *testing.T, env []string, stdin []byte, args ...string) (execResult, time.Duration) {
	t.Helper()
	start := time.Now()
	r := runExec(t, env, stdin, args...)
	return r, time.Since(start)
}

// TestExecServeStoppedBeforeTheCall: a serve that is SIGSTOPped does not
// answer. On the default socket exec runs the call cold once the serve
// has not answered within execrelay.AnswerTimeout; on a named socket it
// exits 125 then, saying so.
func TestExecServeStoppedBeforeTheCall(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	runtimeDir := shortTempDir(t)
	sock := filepath.Join(runtimeDir, "promptkit-sandbox", "serve.sock")
	srv := startServe(t, sock, []string{"SERVE_MARK=served"}, "--config", cfg)
	env := []string{"XDG_RUNTIME_DIR=" + runtimeDir, execrelay.EnvSocket + "="}
	hook := []string{"--config", cfg, "--sandbox", "host", "--timeout", "5s", "--", "sh", "-c", `cat; printf ':%s' "$SERVE_MARK"`}
	if r := runExec(t, env, []byte("in"), hook...); r.code != 0 || r.stdout != "in:served" {
		t.Fatalf("through the serve before it was stopped: %+v", r)
	}
	srv.freeze(t)

	r, took := timedExec(t, env, []byte("in"), hook...)
	if r.code != 0 || r.stdout != "in:" || r.stderr != "" {
		t.Errorf("default socket, serve stopped: %+v; want the call run cold", r)
	}
	// The wait for the serve, then a cold call (a direct sandbox: no
	// plugin to start).
	if took > execrelay.AnswerTimeout+5*time.Second {
		t.Errorf("default socket, serve stopped: took %s", took)
	}

	// The wait counts against --timeout: of 3 s, about 1 s is left for
	// a hook that takes 1.5 s.
	r, took = timedExec(t, env, nil, "--config", cfg, "--sandbox", "host", "--timeout", "3s", "--", "sleep", "1.5")
	if r.code != exitTimeout {
		t.Errorf("default socket, serve stopped, a hook past what the wait left: %+v; want exit 124", r)
	}
	if took > 3*time.Second+5*time.Second {
		t.Errorf("default socket, serve stopped, a hook past what the wait left: took %s", took)
	}

	r, took = timedExec(t, env, []byte("in"), append([]string{"--socket", sock}, hook...)...)
	want := "promptkit-sandbox: exec: serve on " + sock + ": did not answer within " + execrelay.AnswerTimeout.String() + " (stopped or overloaded?)"
	if r.code != exitSandbox || r.stdout != "" || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("named socket, serve stopped: %+v; want exit 125 and %q", r, want)
	}
	if took > execrelay.AnswerTimeout+time.Second {
		t.Errorf("named socket, serve stopped: took %s", took)
	}
}

// TestExecServeStoppedMidCall: a serve SIGSTOPped while its call runs.
// With --timeout, exec answers 124 at the deadline plus sandbox.Grace;
// without a deadline that near, 125 once the serve has not answered for
// execrelay.StallTimeout. Either way it passes on what the hook wrote before
// the stop, and waits on nothing more (no 10 s Close). Continued, the
// serve kills the call whose exec is gone.
func TestExecServeStoppedMidCall(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "s.sock")
	const hook = `echo before; echo $$ >> "$0"; sleep 60 & echo $! >> "$0"; wait`

	for _, tc := range []struct {
		name    string
		timeout string
		code    int
		stderr  string
		within  time.Duration // from the stop
	}{
		{"deadline", "2s", exitTimeout, "timed out after 2s", 2*time.Second + sandbox.Grace + time.Second},
		{"no deadline near", "5m", exitSandbox, "stopped answering", execrelay.StallTimeout + execrelay.HeartbeatInterval + sandbox.Grace + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServe(t, sock, nil, "--config", cfg)
			pidFile := filepath.Join(shortTempDir(t), "pids")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, stdout, stderr := hookCommand(ctx, t, isolated(t), nil,
				"--socket", sock, "--config", cfg, "--sandbox", "host", "--timeout", tc.timeout, "--", "sh", "-c", hook, pidFile)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			ids := proctest.Identify(t, proctest.ReadPIDs(t, pidFile, 2)...)
			// The line is on its way to exec (the serve sends output within
			// plugin.StreamDelay of its writing).
			time.Sleep(plugin.StreamDelay + 200*time.Millisecond)
			srv.freeze(t)
			stopped := time.Now()

			err := cmd.Wait()
			took := time.Since(stopped)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Errorf("exit: %v, want %d; stderr:\n%s", err, tc.code, stderr)
			}
			if stdout.String() != "before\n" {
				t.Errorf("stdout %q, want what the hook wrote before the stop", stdout)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if took > tc.within {
				t.Errorf("exec ended %s after the serve was stopped, want within %s", took, tc.within)
			}
			// The hook lives on in the stopped serve: nothing can end it
			// from outside but a signal to the serve. Continued, the serve
			// sees the call's connection gone and kills it.
			if err := srv.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			proctest.AssertGone(t, ids...)
			if code := srv.stop(t); code != 0 {
				t.Errorf("serve exited %d:\n%s", code, srv.stderr)
			}
		})
	}
}
