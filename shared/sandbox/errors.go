package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind classifies why a Spawn failed. It is what crosses a plugin boundary
// alongside the message, so the host can rebuild an error that answers
// errors.Is and errors.As exactly as the backend's own error did.
type Kind int

const (
	// KindUnknown is an error this package did not classify.
	KindUnknown Kind = iota
	// KindTimeout: Request.Timeout (or the sandbox default) expired.
	KindTimeout
	// KindExit: the process ran and exited non-zero (or died of a signal
	// nobody in the sandbox sent).
	KindExit
	// KindStart: the process could not be started (command not found,
	// image missing, pod gone, invalid request).
	KindStart
	// KindTransport: the backend itself failed (plugin crashed, engine or
	// API server unreachable, stream broken).
	KindTransport
	// KindCanceled: the caller's context was cancelled.
	KindCanceled
)

var kindNames = [...]string{"unknown", "timeout", "exit", "start", "transport", "canceled"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Sentinels for errors.Is. ErrTimeout also matches context.DeadlineExceeded
// and ErrCanceled also matches context.Canceled, so code written against the
// standard library's context errors keeps working.
var (
	ErrTimeout   = &Error{Kind: KindTimeout, Msg: "sandbox: timed out"}
	ErrStart     = &Error{Kind: KindStart, Msg: "sandbox: could not start"}
	ErrTransport = &Error{Kind: KindTransport, Msg: "sandbox: transport failed"}
	ErrCanceled  = &Error{Kind: KindCanceled, Msg: "sandbox: cancelled"}
)

// Error is a classified Spawn failure. Msg says what happened in the words
// of the backend ("exec: \"nope\": executable file not found in $PATH",
// "image promptkit/pii:1.2 is not present locally"); Err, if set, is the
// underlying cause and stays reachable through errors.Unwrap.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		return e.Msg + ": " + e.Err.Error()
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return "sandbox: " + e.Kind.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the same kind and, for timeouts and
// cancellations, the standard context errors.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Kind == KindTimeout
	case context.Canceled:
		return e.Kind == KindCanceled
	}
	t, ok := target.(*Error)
	return ok && isSentinel(t) && t.Kind == e.Kind
}

func isSentinel(e *Error) bool {
	return e == ErrTimeout || e == ErrStart || e == ErrTransport || e == ErrCanceled
}

// NewError returns an error of the given kind with a message and optional
// cause. A KindExit error should be an *ExitError instead.
func NewError(kind Kind, msg string, cause error) *Error {
	return &Error{Kind: kind, Msg: msg, Err: cause}
}

// Errorf is NewError with a formatted message. A %w verb in format makes the
// wrapped error the cause.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// ExitError reports a process that ran and exited unsuccessfully.
type ExitError struct {
	// Code is the exit status, or 128+N when the process died of signal N
	// (the shell convention).
	Code int
	// Signal names the signal that killed the process ("killed",
	// "segmentation fault"), empty for a normal exit.
	Signal string
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return fmt.Sprintf("process killed by signal: %s (exit code %d)", e.Signal, e.Code)
	}
	return fmt.Sprintf("process exited with code %d", e.Code)
}

// KindOf classifies any error: the kind of the first *Error or *ExitError
// in its chain, timeouts and cancellations from the standard context
// errors, KindUnknown otherwise (and for nil).
func KindOf(err error) Kind {
	if err == nil {
		return KindUnknown
	}
	var xe *ExitError
	if errors.As(err, &xe) {
		return KindExit
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Kind
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	}
	return KindUnknown
}

// Done reports whether ctx is done, counting a deadline that has passed
// but whose timer has not fired yet, and then waits for it to fire, so
// that ctx.Err (and ContextError) agree. An operation bounded by the
// deadline itself (a dial, a socket read) can fail on it a moment before
// ctx says so; asked first, Done keeps such a failure a timeout.
func Done(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		<-ctx.Done()
		return true
	}
	return false
}

// ContextError turns a finished context into the matching typed error: a
// timeout for an expired deadline, a cancellation otherwise. what names the
// call ("hook pii_redactor", "spawn /bin/sh") and timeout is the limit that
// applied, included in the message when non-zero.
func ContextError(ctx context.Context, what string, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if timeout > 0 {
			return &Error{Kind: KindTimeout, Msg: fmt.Sprintf("%s: timed out after %s", what, timeout)}
		}
		return &Error{Kind: KindTimeout, Msg: what + ": timed out"}
	}
	return &Error{Kind: KindCanceled, Msg: what + ": cancelled", Err: context.Cause(ctx)}
}
