package tether

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary runs as the tether when started with Flag, as the
// plugin's binary does.
func TestMain(m *testing.M) {
	if Invoked(os.Args) {
		os.Exit(Main(os.Args))
	}
	os.Exit(m.Run())
}

// tethered is a tether started on a command line, its stdin a pipe whose
// write end the test holds, as the plugin holds its attach connection.
type tethered struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr syncBuffer
	done           chan error
}

func start(t *testing.T, argv ...string) *tethered {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tt := &tethered{cmd: exec.Command(self, append([]string{Flag}, argv...)...), done: make(chan error, 1)}
	tt.cmd.Stdout, tt.cmd.Stderr = &tt.stdout, &tt.stderr
	// What the hook left running may hold the output pipes: the exit is
	// what is tested.
	tt.cmd.WaitDelay = time.Second
	if tt.stdin, err = tt.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := tt.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { tt.done <- tt.cmd.Wait() }()
	t.Cleanup(func() {
		_ = tt.cmd.Process.Kill()
		<-tt.done
	})
	return tt
}

// syncBuffer is a buffer exec's copier writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// send writes one frame of stdin, leaving the pipe open.
func (tt *tethered) send(t *testing.T, stdin []byte) {
	t.Helper()
	if _, err := tt.stdin.Write(append(Header(len(stdin)), stdin...)); err != nil {
		t.Fatal(err)
	}
}

// exit waits for the tether to exit and returns its exit status.
func (tt *tethered) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-tt.done:
		tt.done <- err // for the cleanup
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return xe.ExitCode()
		}
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("the tether still runs %v on (stderr %q)", within, tt.stderr.String())
		return -1
	}
}

// hookStderr is what the hook wrote to stderr: what follows Hello.
func (tt *tethered) hookStderr(t *testing.T) string {
	t.Helper()
	got, ok := strings.CutPrefix(tt.stderr.String(), Hello)
	if !ok {
		t.Fatalf("stderr %q does not start with the tether's hello", tt.stderr.String())
	}
	return got
}

func TestStdinReachesTheHookAndTheExitStatusComesBack(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: past a pipe's buffer
	tt := start(t, "sh", "-c", `cat; echo done >&2; exit 3`)
	tt.send(t, payload)
	// The plugin's end stays open: the hook's exit alone ends the tether.
	if code := tt.exit(t, 30*time.Second); code != 3 {
		t.Errorf("exit status %d, want 3 (stderr %q)", code, tt.stderr.String())
	}
	if got := tt.stdout.String(); got != string(payload) {
		t.Errorf("the hook read %d bytes, want the %d sent", len(got), len(payload))
	}
	if got := tt.hookStderr(t); got != "done\n" {
		t.Errorf("hook stderr %q, want %q", got, "done\n")
	}
}

func TestEmptyStdinIsEOF(t *testing.T) {
	tt := start(t, "sh", "-c", `n=$(wc -c); echo "read $n"`)
	tt.send(t, nil)
	if code := tt.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("exit status %d (stderr %q)", code, tt.stderr.String())
	}
	if got := strings.TrimSpace(tt.stdout.String()); got != "read 0" {
		t.Errorf("stdout %q, want read 0", got)
	}
}

// TestPluginGoneKillsTheHook closes the plugin's end while the hook runs
// and has not read the stdin it was sent (more than a pipe holds): the
// tether kills the hook and exits at once.
func TestPluginGoneKillsTheHook(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame bool
	}{{"before any frame", false}, {"with a frame the hook never reads", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tt := start(t, "sh", "-c", `echo $$; exec sleep 60`)
			if tc.frame {
				go func() { _, _ = tt.stdin.Write(append(Header(1<<20), make([]byte, 1<<20)...)) }()
			}
			pid := waitPID(t, tt)
			closed := time.Now()
			if err := tt.stdin.Close(); err != nil {
				t.Fatal(err)
			}
			if code := tt.exit(t, 10*time.Second); code != ExitPluginGone {
				t.Errorf("exit status %d, want %d", code, ExitPluginGone)
			}
			waitGone(t, pid, 10*time.Second)
			t.Logf("the hook was gone %v after the plugin's end closed", time.Since(closed).Round(time.Millisecond))
		})
	}
}

// waitPID reads the PID the hook prints first.
func waitPID(t *testing.T, tt *tethered) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if line, ok := strings.CutSuffix(tt.stdout.String(), "\n"); ok {
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("hook printed %q", line)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the hook printed no PID")
	return 0
}

// waitGone waits until pid is no process (or a zombie nobody reaped yet).
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook (pid %d) still runs %v after the plugin's end closed", pid, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSignalsReachTheHook(t *testing.T) {
	tt := start(t, "sh", "-c", `trap 'kill $!; echo term; exit 7' TERM; echo ready; sleep 60 & wait`)
	tt.send(t, nil)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(tt.stdout.String(), "ready") {
		if time.Now().After(deadline) {
			t.Fatal("the hook never got ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tt.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := tt.exit(t, 10*time.Second); code != 7 {
		t.Errorf("exit status %d, want the hook's 7 (stdout %q)", code, tt.stdout.String())
	}
	if got := tt.stdout.String(); got != "ready\nterm\n" {
		t.Errorf("stdout %q, want the trap's", got)
	}
}

func TestHookKilledBySignal(t *testing.T) {
	tt := start(t, "sh", "-c", `kill -9 $$`)
	tt.send(t, nil)
	if code := tt.exit(t, 10*time.Second); code != 128+9 {
		t.Errorf("exit status %d, want 137", code)
	}
}

func TestCommandThatCannotRun(t *testing.T) {
	noExec := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command, reason string
		code            int
	}{
		{"no-such-command-here", "executable file not found in $PATH", ExitNotFound},
		{"/no/such/hook", "no such file or directory", ExitNotFound},
		{noExec, "permission denied", ExitCannotRun},
	} {
		t.Run(filepath.Base(tc.command), func(t *testing.T) {
			tt := start(t, tc.command, "arg")
			if code := tt.exit(t, 10*time.Second); code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			want := FailurePrefix + "exec " + tc.command + " failed: " + tc.reason + "\n"
			if got := tt.hookStderr(t); got != want {
				t.Errorf("stderr after the hello %q, want %q", got, want)
			}
		})
	}
}
