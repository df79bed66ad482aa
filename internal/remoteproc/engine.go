package remoteproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Options shape an Engine.
type Options struct {
	// Mode names the sandbox mode in messages ("docker_exec").
	Mode string
	// CLI says the target is reached through a client binary: its exit
	// status is its own when the connection failed, and it prints its
	// own words after the command's exit line.
	CLI bool
	// Warm is how many sessions the engine keeps started ahead of calls,
	// their wrappers waiting; 0 for none.
	Warm int
	// Resident, when set, returns a running resident in the target for a
	// call, or nil when the call goes through an exec of its own.
	Resident func(ctx context.Context) *resident.Client
}

// Engine runs calls in one Target: through its resident when one runs,
// else through the wrapper in an exec session (a warm one when the pool
// has it). It is safe for concurrent use.
type Engine struct {
	t    Target
	opts Options
	// gateKey is t's key at the start gate: its String, made once, not
	// for each call.
	gateKey string
	pool    *warmpool.Pool[*session] // nil without warm sessions
	reaper  warmpool.Reaper

	closeOnce sync.Once
	closed    atomic.Bool
}

// poolKey is the one key of the warm pool: the wrapper takes its command
// from its call, so any session serves any call.
const poolKey = ""

// New returns an engine for t. With opts.Warm it starts opening warm
// sessions at once.
func New(t Target, opts Options) *Engine {
	e := &Engine{t: t, opts: opts, gateKey: t.String()}
	if opts.Warm > 0 {
		e.pool = warmpool.New[*session](opts.Warm, &e.reaper)
		e.pool.Fill(poolKey, e.prepare)
	}
	return e
}

func (e *Engine) prepare(context.Context) (*session, error) { return e.startSession(), nil }

// Target is the target the engine runs calls in.
func (e *Engine) Target() Target { return e.t }

// Warm is how many warm sessions wait for a call now, and how many the
// engine keeps (0 without a pool).
func (e *Engine) Warm() (ready, size int) {
	if e.pool == nil {
		return 0, 0
	}
	return e.pool.Ready(), e.opts.Warm
}

// Close ends the warm sessions (their wrappers exit without running
// anything) and waits for them. Calling it again does nothing.
func (e *Engine) Close() {
	e.closed.Store(true)
	e.closeOnce.Do(func() {
		if e.pool != nil {
			e.pool.Close()
		}
		e.reaper.Close()
	})
}

// Check makes sure t can run the wrapper and the kill script; mode names
// the sandbox mode in its message. The check is a command of a moment:
// an exec that has not ended within checkAttempt is stuck before its
// stream opened (as a loaded cluster's now and then is, see
// SessionStart), and is cut and tried again while ctx lasts.
func Check(ctx context.Context, t Target, mode string) error {
	var (
		out   *resident.HeadBuffer
		code  int
		err   error
		tries int
	)
	start := time.Now()
	for {
		out = &resident.HeadBuffer{Max: 4096} // both streams; only the head is quoted
		release, gerr := gate.enter(ctx, t.String())
		if gerr != nil {
			err = gerr
			break
		}
		actx, cancel := context.WithTimeout(ctx, checkAttempt)
		code, err = t.Exec(actx, CheckArgv(), nil, out, out)
		release()
		tries++
		stalled := err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if !stalled {
			break
		}
	}
	if err != nil && ctx.Err() != nil && tries == 0 {
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf(
			"exec in %s: the check waited %v behind this process's other execs starting there, and never started",
			t, time.Since(start).Round(100*time.Millisecond)), ctx.Err())
	}
	if err != nil && ctx.Err() != nil {
		// The caller gave up while the check hung (every try before the
		// last stalled): asking the target why, on a context that is
		// over, would only blame the connection.
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf(
			"exec in %s: the check (%s) did not finish within %v (%d tries, each cut after %v): the exec did not start or did not end; "+
				"the container runtime on the node may be stuck (its log says more)",
			t, checkScript, time.Since(start).Round(100*time.Millisecond), tries, checkAttempt), ctx.Err())
	}
	if err != nil {
		if xerr := t.Explain(ctx, err, ""); xerr != nil {
			return xerr
		}
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("exec in %s", t), err)
	}
	if code == 0 {
		return nil
	}
	if cf, ok := t.(ClientFailure); ok {
		if err := cf.ClientFailure(out.String()); err != nil {
			return err
		}
	}
	return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s cannot run %s commands: it needs %s; the check exited %d: %s",
		t, mode, Requirement, code, clip(out.String(), 512)), nil)
}

// Call is one command for the engine to run.
type Call struct {
	Command string
	Args    []string
	// Env is KEY=value entries (merged already), each KEY a shell
	// identifier.
	Env   []string
	Stdin []byte
	// Timeout is the limit that applies, for messages and the
	// resident's backstop; the call's context enforces it.
	Timeout time.Duration
	// OutputLimit is the cap each stream's writer applies; the resident
	// sends one byte past it, so the writer sees the cut.
	OutputLimit int
}

// ErrNotRun marks a call whose command never started (the session ended
// or was refused first): a caller may run it again elsewhere.
var ErrNotRun = errors.New("the command did not start")

// ErrNotFound marks a call whose command does not exist in the target
// (or is not executable); it is a sandbox.ErrStart too.
var ErrNotFound = errors.New("no such command")

// Run runs c in the target, writing its output to stdout and stderr, and
// returns its exit code. Errors are classified as sandbox errors: a
// ContextError when ctx ends first (the command and everything it started
// are gone by then), ErrStart for a command that does not exist
// (ErrNotFound) or a target that cannot run it, ErrTransport for a
// connection that failed. ErrNotRun marks an error after which the command
// never ran.
func (e *Engine) Run(ctx context.Context, c Call, stdout, stderr io.Writer) (int, error) {
	what := fmt.Sprintf("command %q", c.Command)
	if e.closed.Load() {
		return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: the %s sandbox is closed", what, e.opts.Mode), nil)
	}
	pre, err := Preamble(c.Command, c.Args, c.Env)
	if err != nil {
		return 0, sandbox.NewError(sandbox.KindStart, what+": "+err.Error(), nil)
	}
	if ctx.Err() != nil {
		return 0, sandbox.ContextError(ctx, what, c.Timeout)
	}
	if e.opts.Resident != nil {
		if rc := e.opts.Resident(ctx); rc != nil {
			return e.runResident(ctx, rc, c, what, stdout, stderr)
		}
	}
	input := append(pre, c.Stdin...)
	var o outcome
	if e.pool != nil {
		if ss, ok := e.pool.Take(ctx, poolKey, e.prepare); ok {
			o = e.runIn(ctx, ss, input, what, stdout, stderr)
			e.pool.Replenish(poolKey)
			if o.taken || ctx.Err() != nil {
				return e.result(ctx, o, what, c.Timeout)
			}
			// The warm session ended before it started the call (its
			// stream was cut, its target went away): the call never
			// ran, and runs in a session of its own.
		}
	}
	o = e.runIn(ctx, e.startSession(), input, what, stdout, stderr)
	var stalled *stalledError
	if errors.As(o.err, &stalled) && ctx.Err() == nil {
		// One more session: a stalled start is the transport's hiccup,
		// and the call has not run anywhere.
		o = e.runIn(ctx, e.startSession(), input, what, stdout, stderr)
	}
	return e.result(ctx, o, what, c.Timeout)
}

func (e *Engine) result(ctx context.Context, o outcome, what string, timeout time.Duration) (int, error) {
	switch {
	case sandbox.Done(ctx):
		return 0, sandbox.ContextError(ctx, what, timeout)
	case o.err != nil && !o.taken:
		return 0, &notRun{o.err}
	}
	return o.code, o.err
}

// notRun is an error after which the command never ran.
type notRun struct{ err error }

func (e *notRun) Error() string        { return e.err.Error() }
func (e *notRun) Unwrap() error        { return e.err }
func (e *notRun) Is(target error) bool { return target == ErrNotRun }

// notFound is the error for a command the target lacks.
func (e *Engine) notFound(what string) error {
	return &notFoundError{sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: not found (or not executable) in %s", what, e.t), nil)}
}

// notFoundError is a start error that also matches ErrNotFound.
type notFoundError struct{ err *sandbox.Error }

func (e *notFoundError) Error() string        { return e.err.Error() }
func (e *notFoundError) Unwrap() error        { return e.err }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

// killTree kills the session's wrapper and everything it started, in the
// target, through a second exec with a context of its own (the call's may
// be done), and waits for it: bounded by CleanupTimeout. A kill exec that
// fails (a runtime too loaded to answer in time, a cut connection) would
// leave the call's processes running: it is tried again off the call's
// path, and Close waits for that. (Waiting for the kill is what a loaded
// engine needs: handed to the background after a short budget, kills
// piled up behind new calls and fell behind, in the conformance suite at
// a load average of 30.)
func (e *Engine) killTree(ss *session) {
	// Without a PID the call was never sent: nothing ran.
	pid := ss.f.PID()
	if pid <= 0 {
		return
	}
	if !e.kill(pid) {
		e.reaper.Reap(killRetry{e: e, pid: pid})
	}
}

// kill runs the kill script once and reports whether it ran (it exits 0
// whatever it found).
func (e *Engine) kill(pid int) bool {
	// Not through the start gate: a kill must not wait behind the starts
	// of new calls, and it is rare and short.
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	code, err := e.t.Exec(ctx, KillArgv(pid), nil, io.Discard, io.Discard)
	return err == nil && code == 0
}

// killRetries is how many more times a failed kill is tried, a second
// apart and then more: a target that fails them all is gone or
// unreachable, and its processes with it or out of reach. The PID cannot
// have been reused meanwhile: PIDs are handed out in turn, and a target
// does not go through its PID space in seconds.
const killRetries = 4

// killRetry is a kill to try again; the reaper runs it.
type killRetry struct {
	e   *Engine
	pid int
}

func (k killRetry) Discard() {
	for i := range killRetries {
		time.Sleep(time.Duration(i+1) * time.Second)
		if k.e.kill(k.pid) {
			return
		}
	}
}

// clip trims s and cuts it to n bytes.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
