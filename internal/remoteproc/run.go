package remoteproc

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// outcome is how a call went in one session.
type outcome struct {
	code  int
	taken bool // the wrapper took the call (ran the command, or found it missing): no second try
	err   error
}

// runIn runs the call (input: the preamble, then stdin) in ss: the call
// goes to the wrapper once its PID is known; the engine waits for the
// stream to end, kills what the command left holding it past
// OrphanGrace, kills the whole tree when ctx ends, and classifies how it
// ended.
func (e *Engine) runIn(ctx context.Context, ss *session, input []byte, what string, stdout, stderr io.Writer) outcome {
	f := ss.f
	ss.stdout.Claim(stdout)
	ss.stderr.Claim(stderr)
	// A fresh session waits at the start gate first (StartsInFlight);
	// its start is timed from when it went to the target. One the call
	// gave up on while it waited never went: nothing ran.
	select {
	case <-ss.issued:
	case <-ss.done:
	case <-ctx.Done():
		select {
		case <-ss.issued:
		default:
			ss.cancel()
			<-ss.done
			return outcome{err: ctx.Err()}
		}
	}
	// The call goes to the wrapper only once its PID is known, so a
	// command never runs that a timeout could not find and kill: a
	// wrapper that starts after the call gave up reads end of file and
	// exits without running anything. (A warm session's PID is known.)
	startBound := time.NewTimer(sessionStart)
	defer startBound.Stop()
	select {
	case <-f.Started():
		if !ss.ended() {
			ss.send(input)
			ss.sent = true
		}
	case <-ss.done:
	case <-ctx.Done():
	case <-startBound.C:
		// The call was never sent: nothing of it runs. Cut the session
		// and let the caller try another.
		ss.cancel()
		select {
		case <-ss.done:
		case <-time.After(StreamGrace):
		}
		return outcome{err: &stalledError{sandbox.NewError(sandbox.KindTransport,
			fmt.Sprintf("%s: the exec session in %s did not start within %v", what, e.t, sessionStart), nil)}}
	}
	select {
	case <-ss.done:
	case <-f.Exited():
		// The command has exited; what still holds the streams is left
		// over from it.
		select {
		case <-ss.done:
		case <-ctx.Done():
		case <-time.After(OrphanGrace):
			e.killTree(ss)
			// With them gone the stream ends and brings the rest of the
			// output. A stream still held past StreamGrace (a kill that
			// failed on a loaded target) is cut: the command's exit
			// status is known, and the call does not wait for its
			// deadline.
			select {
			case <-ss.done:
			case <-ctx.Done():
			case <-time.After(StreamGrace):
			}
		}
	case <-ctx.Done():
	}
	if ctx.Err() != nil && !ss.ended() {
		// Closing the exec stream would leave the remote process
		// running: kill it, and everything it started, in the target.
		f.Killed()
		e.killTree(ss)
		select {
		case <-ss.done:
		case <-time.After(CancelDrain):
		}
	}
	ss.cancel()
	select {
	case <-ss.done:
	case <-time.After(StreamGrace):
		if code, ok := f.ExitCode(); ok && ctx.Err() == nil {
			return outcome{code: code, taken: true}
		}
		return outcome{taken: f.Ran(), err: sandbox.NewError(sandbox.KindTransport,
			fmt.Sprintf("%s: the exec stream to %s did not end", what, e.t), nil)}
	}
	if sandbox.Done(ctx) {
		return outcome{taken: f.Ran(), err: ctx.Err()}
	}
	o := e.classify(ctx, ss, what)
	if ss.sent && !o.taken {
		// The call went to the wrapper, and the stream ended with no word
		// that the command started: most likely it was cut before the
		// wrapper read the call, but the word may have been lost on the
		// way. Whatever may run is killed before the caller tries the
		// call again elsewhere.
		e.killTree(ss)
	}
	return o
}

// classify says how a finished session's call went. The wrapper's lines
// are the authority: its PID line says it started, its run line that the
// command started, its exit line the command's status. What the
// transport reports matters only where they are missing.
func (e *Engine) classify(ctx context.Context, ss *session, what string) outcome {
	f, xcode, xerr := ss.f, ss.code, ss.err
	select {
	case <-f.Started():
	default:
		// The wrapper never ran: the exec was refused or failed, and
		// what the stream carried is the client's or the runtime's
		// words, not the command's output.
		msg := f.ClientMessage()
		err := e.explain(ctx, xerr, msg)
		if err == nil {
			err = sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: the shell in %s did not start (exit code %d): %s",
				what, e.t, xcode, orNone(xerr, msg)), nil)
		}
		return outcome{err: err}
	}
	if f.NotFound() {
		return outcome{taken: true, err: e.notFound(what)}
	}
	if !f.Ran() {
		// The wrapper started but ended before the command did: the
		// target or the connection went away first.
		err := e.explain(ctx, xerr, "")
		if err == nil {
			when := "before the command started"
			if ss.sent {
				when = "after the call was sent, before the command was seen to start"
			}
			err = sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: the exec session in %s ended %s (exit code %d): %s",
				what, e.t, when, xcode, orNone(xerr, f.ClientMessage())), nil)
		}
		return outcome{err: err}
	}
	if code, ok := f.ExitCode(); ok {
		return outcome{code: code, taken: true}
	}
	// The command ran but its exit was never reported: the wrapper was
	// killed, or the stream was cut.
	switch {
	case e.opts.CLI && xerr == nil && xcode == 0:
		return outcome{taken: true}
	case e.opts.CLI:
		// The client's exit status may be its own: it is no exit code
		// of the command's.
		return outcome{taken: true, err: sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s in %s: the %s client ended before the command did (exit code %d): %s",
			what, e.t, e.opts.Mode, xcode, orNone(xerr, f.ClientMessage())), nil)}
	case xerr != nil:
		if err := e.explain(ctx, nil, ""); err != nil {
			return outcome{taken: true, err: err}
		}
		return outcome{taken: true, err: sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s in %s: the exec stream failed", what, e.t), xerr)}
	}
	return outcome{code: xcode, taken: true}
}

// explain asks the target why an exec failed, on a context of its own
// (the call's may be nearly spent), bounded by CleanupTimeout and by the
// call's own deadline plus StopBudget. The answer is about the target
// (gone, stopped, unreachable), so it stands without the call's name.
func (e *Engine) explain(call context.Context, err error, msg string) error {
	deadline := time.Now().Add(CleanupTimeout)
	if d, ok := call.Deadline(); ok && d.Add(StopBudget).Before(deadline) {
		deadline = d.Add(StopBudget)
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(call), deadline)
	defer cancel()
	return e.t.Explain(ctx, err, msg)
}

// orNone is the best words there are for a failure.
func orNone(err error, msg string) string {
	switch {
	case msg != "":
		return msg
	case err != nil:
		return err.Error()
	}
	return "no message"
}

// stalledError is a session that never started; the call never reached
// it and may go to another.
type stalledError struct{ err error }

func (e *stalledError) Error() string { return e.err.Error() }
func (e *stalledError) Unwrap() error { return e.err }
