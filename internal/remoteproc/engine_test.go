package remoteproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// localTarget runs each exec on this machine in a session of its own, as
// a runtime starts an exec: like a remote exec stream, its output lasts
// until every process holding it is gone, and ending the context drops
// the stream but leaves the processes running, so the engine must find
// them and kill them by PID, as it does in a container.
type localTarget struct{ explain error }

func (localTarget) String() string { return "this machine" }

func (localTarget) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// The stream is dropped; the processes live on until the engine
		// kills them, and only then are the pipes let go.
		select {
		case <-done:
		case <-time.After(StreamGrace):
		}
		return 0, ctx.Err()
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return xe.ExitCode(), nil
	}
	return 0, err
}

func (l localTarget) Explain(context.Context, error, string) error { return l.explain }

// refused is a target whose every exec fails before anything runs.
type refused struct{ localTarget }

func (refused) Exec(context.Context, []string, io.Reader, io.Writer, io.Writer) (int, error) {
	return 0, errors.New("exec refused")
}

func run1(t *testing.T, e *Engine, c Call, timeout time.Duration) (string, string, int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := e.Run(ctx, c, &stdout, &stderr)
	return stdout.String(), stderr.String(), code, err
}

func newEngine(t *testing.T, tg Target, opts Options) *Engine {
	t.Helper()
	e := New(tg, opts)
	t.Cleanup(e.Close)
	return e
}

func TestEngineRunsCalls(t *testing.T) {
	t.Parallel()
	for _, warm := range []int{0, 2} {
		e := newEngine(t, localTarget{}, Options{Mode: "test", Warm: warm})
		for i := range 3 {
			out, errOut, code, err := run1(t, e, Call{
				Command: "/bin/sh", Args: []string{"-c", `cat; printf '%s' "$V" >&2; exit 3`},
				Env: []string{"V=a value\nwith a line"}, Stdin: []byte("in\x1epks:exit:0\n"),
			}, time.Minute)
			if err != nil || code != 3 || out != "in\x1epks:exit:0\n" || errOut != "a value\nwith a line" {
				t.Fatalf("warm %d call %d: code %d err %v stdout %q stderr %q", warm, i, code, err, out, errOut)
			}
		}
	}
}

func TestEngineWarmSessionsServeAnyCall(t *testing.T) {
	t.Parallel()
	e := newEngine(t, localTarget{}, Options{Mode: "test", Warm: 2})
	awaitWarm(t, e)
	for _, cmd := range []string{"echo", "printf"} {
		out, _, code, err := run1(t, e, Call{Command: cmd, Args: []string{"x"}}, time.Minute)
		if err != nil || code != 0 || !strings.HasPrefix(out, "x") {
			t.Fatalf("%s: %q %d %v", cmd, out, code, err)
		}
	}
	awaitWarm(t, e)
}

func awaitWarm(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for ready, size := e.Warm(); ready < size; ready, size = e.Warm() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d warm sessions ready", ready, size)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEngineNotFound(t *testing.T) {
	t.Parallel()
	e := newEngine(t, localTarget{}, Options{Mode: "test"})
	_, _, _, err := run1(t, e, Call{Command: "pks-no-such-command"}, time.Minute)
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, sandbox.ErrStart) ||
		err.Error() != `command "pks-no-such-command": not found (or not executable) in this machine` {
		t.Fatalf("err = %v", err)
	}
	// A command that exits 127 by itself is its own exit code.
	_, _, code, err := run1(t, e, Call{Command: "/bin/sh", Args: []string{"-c", "exit 127"}}, time.Minute)
	if err != nil || code != 127 {
		t.Fatalf("exit 127: code %d err %v", code, err)
	}
}

func TestEngineTimeoutKillsTree(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "pids")
	e := newEngine(t, localTarget{}, Options{Mode: "test"})
	start := time.Now()
	_, _, _, err := run1(t, e, Call{
		Command: "/bin/sh", Timeout: time.Second,
		// A child, one in a session of its own, one that ignores TERM.
		Args: []string{"-c", `sleep 300 & echo $! >>` + pids + `; setsid sleep 301 & echo $! >>` + pids +
			`; sh -c 'trap "" TERM; sleep 302' & echo $! >>` + pids + `; wait`},
	}, time.Second)
	if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	for _, pid := range proctest.ReadPIDs(t, pids, 3) {
		proctest.Gone(t, "a process of the timed-out call", pid)
	}
}

// failingKills is a local target whose first kill execs fail, as they
// do on a runtime too loaded to answer.
type failingKills struct {
	localTarget
	fail  int32 // how many kill execs fail
	kills atomic.Int32
}

func (f *failingKills) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(argv) > 3 && argv[3] == "pks-kill" && f.kills.Add(1) <= f.fail {
		return 0, errors.New("exec create: the runtime did not answer")
	}
	return f.localTarget.Exec(ctx, argv, stdin, stdout, stderr)
}

func TestEngineRetriesAFailedKill(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "pids")
	tg := &failingKills{fail: 1}
	e := newEngine(t, tg, Options{Mode: "test"})
	start := time.Now()
	_, _, _, err := run1(t, e, Call{
		Command: "/bin/sh", Timeout: 500 * time.Millisecond,
		Args: []string{"-c", `sleep 305 & echo $! >>` + pids + `; wait`},
	}, 500*time.Millisecond)
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	// The call does not wait for the retry: its stream is cut.
	if d := time.Since(start); d > 500*time.Millisecond+StreamGrace+2*time.Second {
		t.Errorf("took %s", d)
	}
	proctest.Gone(t, "the process of a call whose first kill failed", proctest.ReadPIDs(t, pids, 1)[0])
	if n := tg.kills.Load(); n != 2 {
		t.Errorf("%d kill execs, want the failed one and one retry", n)
	}
}

func TestEngineKillsOrphansAfterExit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spawn string
		grace       bool // found only by holding the streams past OrphanGrace
	}{
		// It carries the call's mark: the wrapper's sweep kills it as
		// the command exits, and the call does not wait.
		{"marked", `sh -c 'echo $$ >>"$0"; exec sleep 303' "$0" &`, false},
		// Stripped of the mark, it is found by the streams it holds.
		{"unmarked", `env -u ` + CallEnv + ` sh -c 'echo $$ >>"$0"; exec sleep 303' "$0" &`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pids := filepath.Join(t.TempDir(), "pids")
			e := newEngine(t, localTarget{}, Options{Mode: "test"})
			start := time.Now()
			out, _, code, err := run1(t, e, Call{
				// It is running, unmarked or not, before the command exits.
				Command: "/bin/sh", Args: []string{"-c", tc.spawn + ` while [ ! -s "$0" ]; do sleep 0.01; done; echo done`, pids},
			}, time.Minute)
			if err != nil || code != 0 || out != "done\n" {
				t.Fatalf("code %d err %v stdout %q", code, err, out)
			}
			switch d := time.Since(start); {
			case tc.grace && (d < OrphanGrace || d > OrphanGrace+5*time.Second):
				t.Errorf("returned after %s, want about OrphanGrace (%s)", d, OrphanGrace)
			case !tc.grace && d >= OrphanGrace:
				t.Errorf("returned after %s, want before OrphanGrace (%s): the sweep kills it at once", d, OrphanGrace)
			}
			proctest.Gone(t, "the orphan", proctest.ReadPIDs(t, pids, 1)[0])
		})
	}
}

func TestEngineCancel(t *testing.T) {
	t.Parallel()
	e := newEngine(t, localTarget{}, Options{Mode: "test", Warm: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := e.Run(ctx, Call{Command: "sleep", Args: []string{"304"}}, io.Discard, io.Discard)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sandbox.ErrCanceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestEngineRefusedExec(t *testing.T) {
	t.Parallel()
	e := newEngine(t, refused{}, Options{Mode: "test"})
	_, _, _, err := run1(t, e, Call{Command: "true"}, time.Minute)
	if !errors.Is(err, ErrNotRun) || !errors.Is(err, sandbox.ErrStart) ||
		err.Error() != `command "true": the shell in this machine did not start (exit code 0): exec refused` {
		t.Fatalf("err = %v", err)
	}
	explained := sandbox.NewError(sandbox.KindTransport, "unreachable", nil)
	e = newEngine(t, refused{localTarget{explain: explained}}, Options{Mode: "test"})
	_, _, _, err = run1(t, e, Call{Command: "true"}, time.Minute)
	if !errors.Is(err, ErrNotRun) || !errors.Is(err, sandbox.ErrTransport) || err.Error() != "unreachable" {
		t.Fatalf("explained: err = %v", err)
	}
}

func TestEngineBadEnvName(t *testing.T) {
	t.Parallel()
	e := newEngine(t, localTarget{}, Options{Mode: "test"})
	_, _, _, err := run1(t, e, Call{Command: "true", Env: []string{"A-B=1"}}, time.Minute)
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), `env variable "A-B"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	if err := Check(context.Background(), localTarget{}, "test"); err != nil {
		t.Fatal(err)
	}
	err := Check(context.Background(), refused{}, "test")
	if !errors.Is(err, sandbox.ErrTransport) || err.Error() != "exec in this machine: exec refused" {
		t.Fatalf("err = %v", err)
	}
}

// TestCheckRetriesAStalledExec: a check whose exec does not end within
// its bound is cut and tried again; the open does not wait out its
// whole deadline on one stuck stream.
func TestCheckRetriesAStalledExec(t *testing.T) {
	old := checkAttempt
	checkAttempt = 300 * time.Millisecond
	t.Cleanup(func() { checkAttempt = old })
	tg := &stallsFirst{}
	if err := Check(context.Background(), tg, "test"); err != nil || tg.execs.Load() != 2 {
		t.Fatalf("err %v after %d execs; want nil after 2", err, tg.execs.Load())
	}
	// One that always stalls ends with the caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := Check(ctx, stallsAlways{}, "test")
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sandbox.ErrTransport) {
		t.Fatalf("err = %v, want a transport error wrapping the context's deadline", err)
	}
	if want := regexp.MustCompile(`^exec in this machine: the check \(.+\) did not finish within 1(\.\d)?s \(4 tries, each cut after 300ms\): ` +
		`the exec did not start or did not end; the container runtime on the node may be stuck \(its log says more\): context deadline exceeded$`); !want.MatchString(err.Error()) {
		t.Errorf("err = %q, want it to match %s", err, want)
	}
}

// stallsAlways is a target whose every exec is stuck.
type stallsAlways struct{ localTarget }

func (stallsAlways) Exec(ctx context.Context, _ []string, _ io.Reader, _, _ io.Writer) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// stallsFirst is a target whose first exec never starts (a client stuck
// before its stream opens) and whose later ones run here.
type stallsFirst struct {
	localTarget
	execs atomic.Int32
}

func (s *stallsFirst) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if s.execs.Add(1) == 1 {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return s.localTarget.Exec(ctx, argv, stdin, stdout, stderr)
}

// TestEngineRetriesAStalledSession: a fresh session that does not start
// within the bound is cut, and the call runs in another.
func TestEngineRetriesAStalledSession(t *testing.T) {
	old := sessionStart
	sessionStart = 300 * time.Millisecond
	t.Cleanup(func() { sessionStart = old })
	tg := &stallsFirst{}
	e := newEngine(t, tg, Options{Mode: "test"})
	stdout, _, code, err := run1(t, e, Call{Command: "/bin/sh", Args: []string{"-c", "echo ran; exit 3"}}, 30*time.Second)
	if err != nil || code != 3 || stdout != "ran\n" || tg.execs.Load() != 2 {
		t.Fatalf("code %d stdout %q err %v after %d execs; want 3, ran, nil after 2", code, stdout, err, tg.execs.Load())
	}
}
