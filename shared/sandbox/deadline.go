package sandbox

import (
	"context"
	"time"
)

// Grace is the one allowance past a call's deadline. When the deadline
// passes, the backend kills what the call started and reports the
// timeout with what the process wrote; every layer between the caller
// and the backend (the hook runtime, the plugin host, the hop, the
// plugin) waits the deadline plus Grace for that report, and no longer.
// A backend's own drains and diagnoses after a kill fit inside it.
const Grace = time.Second

// A call's deadline is set once, by Enter, where the call enters (the
// hook runtime, or the plugin host for a caller that set none), and
// carried in its context through every layer and across the plugin hop
// (EnterAt). The layers below read it with Remaining and Expire instead
// of starting timers of their own from Request.Timeout, so time spent on
// the way (reopening a sandbox in a restarted plugin) comes out of the
// call's timeout rather than being added to it.
type callDeadline struct {
	at      time.Time
	timeout time.Duration // Request.Timeout, which names the call and its error messages
}

type deadlineKey struct{}

// Enter sets the deadline of a call whose Request.Timeout is timeout:
// timeout from now, unless ctx already carries this call's deadline, set
// by a layer above. The context returned ends Grace past the deadline.
// A timeout of zero or less (the sandbox's default applies, which only
// the backend knows) sets nothing.
func Enter(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	if _, ok := deadlineOf(ctx, timeout); ok {
		return ctx, func() {}
	}
	return EnterAt(ctx, time.Now().Add(timeout), timeout)
}

// EnterAt is Enter with the deadline given: the one a host set, carried
// across the plugin hop.
func EnterAt(ctx context.Context, at time.Time, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	ctx = context.WithValue(ctx, deadlineKey{}, callDeadline{at: at, timeout: timeout})
	return context.WithDeadline(ctx, at.Add(Grace))
}

// deadlineOf is the deadline Enter set for the call whose
// Request.Timeout is timeout; ok is false where none was set.
func deadlineOf(ctx context.Context, timeout time.Duration) (time.Time, bool) {
	d, ok := ctx.Value(deadlineKey{}).(callDeadline)
	if !ok || timeout <= 0 || d.timeout != timeout {
		return time.Time{}, false
	}
	return d.at, true
}

// Remaining is how long the call whose Request.Timeout is timeout has
// left: until the deadline Enter set, or all of timeout where none was
// set. It may be zero or less: the deadline has passed.
func Remaining(ctx context.Context, timeout time.Duration) time.Duration {
	if at, ok := deadlineOf(ctx, timeout); ok {
		return time.Until(at)
	}
	return timeout
}

// Expire is the context a backend kills the call on: ctx, ending at the
// call's deadline (Remaining from now). A timeout of zero or less sets no
// deadline.
func Expire(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	if at, ok := deadlineOf(ctx, timeout); ok {
		return context.WithDeadline(ctx, at)
	}
	return context.WithTimeout(ctx, timeout)
}
