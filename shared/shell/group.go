package shell

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// group takes a process group down when the timeout fires, the context is
// done or Stop is called, and again when the leader exits. Every signal is
// sent under mu and only while the leader is unreaped, so the group ID
// still names our group.
type group struct {
	mu      sync.Mutex
	pgid    int
	sup     *supervision // when set, signals go to the tree through it
	cg      *callCgroup  // when set, signals go to all of it too
	grace   time.Duration
	exited  bool  // the leader has exited; Wait owns the rest
	cause   error // why we started terminating; nil if we never did
	timeout *time.Timer
	kill    *time.Timer
	stopCtx func() bool
	// killed is closed once the host has SIGKILLed the call itself: the
	// leader's exit is then due at once, and Wait waits for it only so
	// long (see Process.awaitExit).
	killed chan struct{}
}

// arm starts the timeout and ties the group to ctx. No timer runs and no
// goroutine waits until one of them fires.
func (g *group) arm(ctx context.Context, p *Process, timeout time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pgid = p.pid
	g.sup, g.cg = p.sup, p.cg
	g.killed = p.killed
	g.grace = p.opts.KillGrace
	what := describe(p.command)
	if timeout > 0 {
		// The call's deadline where it entered with one (sandbox.Enter),
		// else timeout from now.
		g.timeout = time.AfterFunc(sandbox.Remaining(ctx, timeout), func() {
			g.terminate(&sandbox.Error{
				Kind: sandbox.KindTimeout,
				Msg:  fmt.Sprintf("%s: timed out after %s", what, timeout),
			})
		})
	}
	g.stopCtx = context.AfterFunc(ctx, func() {
		g.terminate(sandbox.ContextError(ctx, what, 0))
	})
}

// terminate sends SIGTERM to the group and schedules SIGKILL after the
// grace. The first cause wins; after the leader has exited it does nothing.
func (g *group) terminate(cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.exited || g.cause != nil {
		return
	}
	g.cause = cause
	if g.grace < 0 {
		g.killAll()
		return
	}
	g.signal(syscall.SIGTERM)
	g.kill = time.AfterFunc(g.grace, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.exited {
			g.killAll()
		}
	})
}

// killAll SIGKILLs the call from the host, needing no process of it to
// act: a supervisor is not asked (the command may have stopped it) but
// killed with its tree. g.mu must be held.
func (g *group) killAll() {
	if g.sup != nil {
		g.sup.kill()
	} else {
		g.signal(syscall.SIGKILL)
	}
	close(g.killed)
}

// leaderExited kills whatever is left of the group, disarms the timers
// and returns the termination cause, if any. The caller must not have
// reaped the leader yet. An exited supervisor has killed its tree
// itself, or was killed and left nothing a walk could find, so it is
// not walked again here.
func (g *group) leaderExited() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.signal(syscall.SIGKILL)
	g.exited = true
	if g.timeout != nil {
		g.timeout.Stop()
	}
	if g.kill != nil {
		g.kill.Stop()
	}
	if g.stopCtx != nil {
		g.stopCtx()
	}
	return g.cause
}

func (g *group) signal(sig syscall.Signal) {
	if g.sup != nil {
		g.sup.order(sig)
		return
	}
	// The cgroup holds the group and what left it: one signal each.
	if g.cg != nil && g.cg.signal(sig) {
		return
	}
	// ESRCH cannot happen while the leader is unreaped; nothing else is
	// worth reporting from here.
	_ = syscall.Kill(-g.pgid, sig)
}
