package shell

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func sh(script string, args ...string) sandbox.Request {
	return sandbox.Request{Command: "sh", Args: append([]string{"-c", script, "sh"}, args...)}
}

// checkErrSame asserts the Response repeats the returned error.
func checkErrSame(t *testing.T, resp sandbox.Response, err error) {
	t.Helper()
	if resp.Err != err {
		t.Errorf("Response.Err = %v, returned error = %v; want the same value", resp.Err, err)
	}
}

func TestRunSeparatesStdoutAndStderr(t *testing.T) {
	resp, err := Run(context.Background(), sh(`printf 'to out'; printf 'to err' >&2; printf ' more'`), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := string(resp.Stdout); got != "to out more" {
		t.Errorf("stdout = %q, want %q", got, "to out more")
	}
	if got := string(resp.Stderr); got != "to err" {
		t.Errorf("stderr = %q, want %q", got, "to err")
	}
	if resp.Truncated() || resp.Err != nil {
		t.Errorf("truncated = %v, Err = %v; want false, nil", resp.Truncated(), resp.Err)
	}
}

func TestRunFeedsStdin(t *testing.T) {
	// Larger than a pipe buffer, so feeding and reading must overlap.
	in := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16)
	req := sandbox.Request{Command: "cat", Stdin: in}
	resp, err := Run(context.Background(), req, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !bytes.Equal(resp.Stdout, in) {
		t.Errorf("stdout: got %d bytes, want the %d bytes of stdin", len(resp.Stdout), len(in))
	}
}

func TestRunWithoutStdinSeesEOF(t *testing.T) {
	resp, err := Run(context.Background(), sh(`cat; echo end`), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := string(resp.Stdout); got != "end\n" {
		t.Errorf("stdout = %q, want %q", got, "end\n")
	}
}

func TestRunProcessThatIgnoresStdin(t *testing.T) {
	in := bytes.Repeat([]byte("x"), 8<<20)
	for _, tc := range []struct {
		name, script, want string
	}{
		{"never reads", `echo ignored`, "ignored\n"},
		{"reads a little", `head -c 5; echo`, "xxxxx\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := sh(tc.script)
			req.Stdin = in
			start := time.Now()
			resp, err := Run(context.Background(), req, Options{Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("Run: %v (a closed stdin is not a failure)", err)
			}
			if got := string(resp.Stdout); got != tc.want {
				t.Errorf("stdout = %q, want %q", got, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v; an unread stdin must not hold the call", d)
			}
		})
	}
}

func TestRunExitCode(t *testing.T) {
	resp, err := Run(context.Background(), sh(`echo partial; echo oops >&2; exit 7`), Options{})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) {
		t.Fatalf("err = %v (%T), want *sandbox.ExitError", err, err)
	}
	if *xe != (sandbox.ExitError{Code: 7}) {
		t.Errorf("ExitError = %+v, want {Code:7}", *xe)
	}
	if sandbox.KindOf(err) != sandbox.KindExit {
		t.Errorf("KindOf = %v, want exit", sandbox.KindOf(err))
	}
	checkErrSame(t, resp, err)
	if string(resp.Stdout) != "partial\n" || string(resp.Stderr) != "oops\n" {
		t.Errorf("output = %q / %q, want what was written before the failure", resp.Stdout, resp.Stderr)
	}
}

func TestRunProcessKilledBySignalItself(t *testing.T) {
	for _, tc := range []struct {
		sig  string
		want sandbox.ExitError
	}{
		{"KILL", sandbox.ExitError{Code: 137, Signal: "killed"}},
		{"TERM", sandbox.ExitError{Code: 143, Signal: "terminated"}},
	} {
		t.Run(tc.sig, func(t *testing.T) {
			resp, err := Run(context.Background(), sh(`kill -`+tc.sig+` $$`), Options{})
			var xe *sandbox.ExitError
			if !errors.As(err, &xe) {
				t.Fatalf("err = %v (%T), want *sandbox.ExitError", err, err)
			}
			if *xe != tc.want {
				t.Errorf("ExitError = %+v, want %+v", *xe, tc.want)
			}
			if errors.Is(err, sandbox.ErrTimeout) || errors.Is(err, context.Canceled) {
				t.Errorf("a signal the process sent itself was reported as ours: %v", err)
			}
			checkErrSame(t, resp, err)
		})
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		req   sandbox.Request
		opts  Options
		cause error // nil: only the kind is checked
	}{
		{"empty command", sandbox.Request{}, Options{}, nil},
		{"not found", sandbox.Request{Command: "promptkit-no-such-command"}, Options{}, exec.ErrNotFound},
		{"no such path", sandbox.Request{Command: filepath.Join(dir, "missing")}, Options{}, fs.ErrNotExist},
		{"not executable", sandbox.Request{Command: notExec}, Options{}, fs.ErrPermission},
		{"bad workdir", sandbox.Request{Command: "true"}, Options{Dir: filepath.Join(dir, "nope")}, fs.ErrNotExist},
		{"NUL in argument", sandbox.Request{Command: "echo", Args: []string{"a\x00b"}}, Options{}, syscall.EINVAL},
		{"NUL in env", sandbox.Request{Command: "true", Env: []string{"A=\x00"}}, Options{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := Run(context.Background(), tc.req, tc.opts)
			if !errors.Is(err, sandbox.ErrStart) || sandbox.KindOf(err) != sandbox.KindStart {
				t.Fatalf("err = %v (kind %v), want a KindStart error", err, sandbox.KindOf(err))
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.cause)
			}
			checkErrSame(t, resp, err)
		})
	}
}

func TestRunWorkdir(t *testing.T) {
	dir := t.TempDir()
	resp, err := Run(context.Background(), sandbox.Request{Command: "pwd", Args: []string{"-P"}}, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(resp.Stdout)); got != want {
		t.Errorf("pwd = %q, want %q", got, want)
	}
}

func TestRunWithDoneContextStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := Run(ctx, sh(`touch "$1"`, marker), Options{})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sandbox.ErrCanceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	checkErrSame(t, resp, err)
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Error("the command ran although the context was already cancelled")
	}
}

func TestTimeoutSources(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reqTO   time.Duration
		optsTO  time.Duration
		wantMsg string
	}{
		{"options default", 0, 200 * time.Millisecond, "timed out after 200ms"},
		{"request overrides options", 250 * time.Millisecond, time.Minute, "timed out after 250ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := sandbox.Request{Command: "sleep", Args: []string{"30"}, Timeout: tc.reqTO}
			start := time.Now()
			resp, err := Run(context.Background(), req, Options{Timeout: tc.optsTO})
			elapsed := time.Since(start)
			if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if want := `command "sleep": ` + tc.wantMsg; err.Error() != want {
				t.Errorf("message = %q, want %q", err.Error(), want)
			}
			checkErrSame(t, resp, err)
			if elapsed > 5*time.Second {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

func TestNoTimeoutWhenOptionsNegative(t *testing.T) {
	req := sandbox.Request{Command: "sleep", Args: []string{"0.3"}}
	if _, err := Run(context.Background(), req, Options{Timeout: -1}); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestCallerDeadlineIsATimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	resp, err := Run(ctx, sandbox.Request{Command: "sleep", Args: []string{"30"}}, Options{})
	if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	checkErrSame(t, resp, err)
}

func TestWaitTwiceReturnsSameResult(t *testing.T) {
	p, err := Start(context.Background(), sh(`echo once; exit 3`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err1 := p.Wait()
	r2, err2 := p.Wait()
	if err1 != err2 || string(r1.Stdout) != "once\n" || string(r2.Stdout) != "once\n" {
		t.Errorf("second Wait = %q, %v; first = %q, %v", r2.Stdout, err2, r1.Stdout, err1)
	}
}

func TestOutputReadableWhileRunning(t *testing.T) {
	p, err := Start(context.Background(), sh(`echo first; exec sleep 30`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stdout().Len() < len("first\n") {
		if time.Now().After(deadline) {
			t.Fatal("no output while running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := string(p.Stdout().Since(0)); got != "first\n" {
		t.Errorf("Since(0) = %q", got)
	}
	p.Stop()
	resp, err := p.Wait()
	if !errors.Is(err, context.Canceled) || sandbox.KindOf(err) != sandbox.KindCanceled {
		t.Errorf("err = %v, want a cancellation after Stop", err)
	}
	if string(resp.Stdout) != "first\n" {
		t.Errorf("stdout = %q", resp.Stdout)
	}
}

// slowSink stalls on its first write, as a busy consumer would.
type slowSink struct {
	bytes.Buffer
	stalled bool
}

func (s *slowSink) Write(p []byte) (int, error) {
	if !s.stalled {
		s.stalled = true
		time.Sleep(300 * time.Millisecond)
	}
	return s.Buffer.Write(p)
}

// Output still in the pipe when the process has exited is read to the
// end, however far behind the reader is: only a pipe held open by an
// escaped descendant, with nothing in it, is cut off after OrphanWait.
func TestOutputBehindTheExitIsNotLost(t *testing.T) {
	var sink slowSink
	const size = 60000 // fits in the pipe, so the process exits before it is read
	resp, err := Run(context.Background(), sh(`head -c 60000 /dev/zero | tr '\0' x`), Options{
		OrphanWait: 50 * time.Millisecond, StdoutSink: &sink,
	})
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if sink.Len() != size || resp.StdoutTruncated {
		t.Fatalf("sink got %d bytes of %d (truncated %v)", sink.Len(), size, resp.StdoutTruncated)
	}
}
