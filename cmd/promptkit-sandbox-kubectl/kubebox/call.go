package kubebox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// call is one Spawn's command, run in a target.
type call struct {
	s              *Sandbox
	input          []byte // the wrapper's preamble, then the call's stdin
	what           string
	stdout, stderr io.Writer
}

// run runs the call in t, in a warm session when the pool has one.
// gone reports that the command never started because the pod went away
// or stopped running (a selector's sandbox then looks for another). The
// exit code is the remote command's.
func (c call) run(ctx context.Context, t target) (code int, gone bool, err error) {
	if c.s.pool != nil {
		if ss := c.s.pool.take(ctx, t); ss != nil {
			o := c.runIn(ctx, ss)
			if o.taken || ctx.Err() != nil {
				return o.code, o.gone, o.err
			}
			// The warm session ended before it started the call (its
			// stream was cut, its pod went away): the call never ran,
			// and runs in a session of its own.
		}
	}
	o := c.runIn(ctx, c.s.startSession(t))
	return o.code, o.gone, o.err
}

// outcome is how a call went in one session.
type outcome struct {
	code  int
	gone  bool // the command never started: the pod went away
	taken bool // the wrapper took the call (ran the command, or found it missing): no second try
	err   error
}

// runIn runs the call in ss.
func (c call) runIn(ctx context.Context, ss *session) outcome {
	s, t := c.s, ss.t
	f := ss.f
	ss.stdout.bind(c.stdout)
	ss.stderr.bind(c.stderr)
	// The call goes to the wrapper only once its PID is known, so a
	// command never runs that a timeout could not find and kill: a
	// wrapper that starts after the call gave up reads end of file and
	// exits without running anything. (A warm session's PID is known.)
	select {
	case <-f.Started():
		ss.send(c.input)
	case <-ss.done:
	case <-ctx.Done():
	}
	select {
	case <-ss.done:
	case <-f.Exited():
		// The command has exited; what still holds the streams is
		// left over from it.
		select {
		case <-ss.done:
		case <-ctx.Done():
		case <-time.After(orphanGrace):
			s.killTree(ss)
			// With them gone the stream ends and brings the rest of
			// the output and the exit status.
			select {
			case <-ss.done:
			case <-ctx.Done():
			}
		}
	case <-ctx.Done():
	}
	if ctx.Err() != nil && !ss.ended() {
		// Closing the exec stream would leave the remote process
		// running: kill it, and everything it started, in the pod.
		s.killTree(ss)
	}
	ss.cancel()
	select {
	case <-ss.done:
	case <-time.After(streamGrace):
		return outcome{taken: f.Ran(), err: sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: the exec stream to %s did not end", c.what, t), nil)}
	}
	if ctx.Err() != nil {
		return outcome{taken: f.Ran(), err: ctx.Err()}
	}
	xcode, xerr := ss.code, ss.err

	select {
	case <-f.Started():
	default:
		// The wrapper never taken: the exec was refused or failed.
		err := s.diagnose(ctx, t, xerr, f.ClientMessage())
		if err == nil {
			err = sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: the shell in %s did not start (exit code %d): %s",
				c.what, t, xcode, f.ClientMessage()), nil)
		}
		return outcome{gone: errors.Is(err, errPodGone), err: err}
	}
	if f.NotFound() {
		return outcome{taken: true, err: sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: not found (or not executable) in %s", c.what, t), nil)}
	}
	if !f.Ran() {
		// The wrapper started but ended before the command did: the
		// pod or the connection went away first.
		err := s.diagnose(ctx, t, ss.err, "")
		if err == nil {
			err = sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: the exec session in %s ended before the command started (exit code %d): %s",
				c.what, t, ss.code, errText(ss.err, f.ClientMessage())), nil)
		}
		return outcome{gone: errors.Is(err, errPodGone), err: err}
	}
	if s.set.transport == TransportCLI {
		// kubectl exits with the remote code, or with its own when the
		// connection failed: the wrapper's exit line tells which.
		if code, ok := f.ExitCode(); ok {
			return outcome{code: code, taken: true}
		}
		if xerr == nil && xcode == 0 {
			return outcome{taken: true}
		}
		return outcome{taken: true, err: sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s in %s: kubectl ended before the command did (exit code %d): %s",
			c.what, t, xcode, errText(xerr, f.ClientMessage())), nil)}
	}
	if xerr != nil {
		if err := s.diagnose(ctx, t, nil, ""); err != nil {
			return outcome{taken: true, err: fmt.Errorf("%s: %w", c.what, err)}
		}
		return outcome{taken: true, err: sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s in %s: the exec stream failed", c.what, t), xerr)}
	}
	return outcome{code: xcode, taken: true}
}

func errText(err error, msg string) string {
	switch {
	case msg != "":
		return msg
	case err != nil:
		return err.Error()
	}
	return "no message"
}

// errPodGone marks a failure because the pod no longer exists or runs.
var errPodGone = errors.New("the pod went away")

// diagnose explains a failed exec: it asks the API server about the pod,
// whose state usually says why (gone, stopped, no such container);
// otherwise the exec's own error (err, or msg from the client) is the
// reason. It returns nil when it finds nothing wrong and has nothing to
// say.
func (s *Sandbox) diagnose(ctx context.Context, t target, err error, msg string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	pod, gerr := s.c.getPod(dctx, t.ns, t.pod)
	switch {
	case reasonOf(gerr) == apiNotFound:
		return &goneError{sandbox.NewError(sandbox.KindStart, fmt.Sprintf("pod %s not found in namespace %s", t.pod, t.ns), nil)}
	case gerr == nil:
		if _, terr := s.targetOf(pod, false); terr != nil {
			return &goneError{terr}
		}
	}
	if err == nil && msg != "" {
		ae := messageErr(s.c.server(), lastLine(msg), nil)
		if ae.reason == apiOther {
			return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("exec in %s: %s", t, ae.msg), nil)
		}
		err = ae
	}
	if err == nil {
		if gerr != nil {
			return s.apiErr("exec in "+t.String(), gerr)
		}
		return nil
	}
	return s.apiErr("exec in "+t.String(), err)
}

// goneError is a sandbox error that also matches errPodGone.
type goneError struct{ err error }

func (e *goneError) Error() string        { return e.err.Error() }
func (e *goneError) Unwrap() error        { return e.err }
func (e *goneError) Is(target error) bool { return target == errPodGone }

// killTree kills the session's wrapper and everything it started, in
// the pod, through a second exec with a context of its own.
func (s *Sandbox) killTree(ss *session) {
	// Without a PID the call was never sent: nothing ran.
	pid := ss.f.PID()
	if pid <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_, _ = s.c.exec(ctx, ss.t, remoteproc.KillArgv(pid), nil, io.Discard, io.Discard)
}
