package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A serve can stop answering at any moment: SIGSTOPped, traced, or
// starved. exec never waits on one without a bound:
//
//   - before the call, the connection, Describe and Open must be done
//     within serveAnswerTimeout, or exec runs the call cold (the default
//     socket) or exits 125 (a named one);
//   - during the call, the call's own deadline holds (--timeout, plus
//     sandbox.Grace for the serve's answer, then 124), and a ping every
//     serveLivenessInterval that goes unanswered for serveStallTimeout
//     ends the call with 125 where no deadline is that near;
//   - after it, releasing the handle is given serveCloseGrace.
//
// What the serve sent before it stopped is passed on. The hook itself
// lives on in a stopped serve (only a signal to the serve can reach it);
// continued, the serve sees the call's connection gone and kills it.
const (
	// serveAnswerTimeout bounds reaching a serve before a call: a live
	// one answers in milliseconds, and a cold call is the fallback.
	serveAnswerTimeout = 2 * time.Second
	// serveLivenessInterval is how often exec pings its serve mid-call.
	serveLivenessInterval = time.Second
	// serveStallTimeout is how long a ping may go unanswered mid-call
	// before the serve is taken for stopped: longer than before the call,
	// since giving up ends a call that may be running well.
	serveStallTimeout = 5 * time.Second
	// serveCloseGrace bounds releasing the call's handle in the serve.
	serveCloseGrace = 500 * time.Millisecond
)

// errServeStalled is the cause of a call ended because its serve stopped
// answering.
var errServeStalled = errors.New("the serve stopped answering")

// notAnswering is a serve that took longer than serveAnswerTimeout before
// the call: ctx (exec's own) is still live and pctx, the bounded one,
// timed out.
func notAnswering(ctx, pctx context.Context) bool {
	return ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded)
}

// servedCall is a sandbox opened in a serve for one call.
type servedCall struct {
	path   string
	cc     *grpc.ClientConn
	client *plugin.Client
	sb     *plugin.RemoteSandbox
}

// Name is the sandbox's name.
func (s *servedCall) Name() string { return s.sb.Name() }

// Spawn runs the call in the serve, pinging it meanwhile: a serve that
// stops answering ends the call (124 past its deadline, 125 before) with
// what it sent so far, instead of holding exec until PromptKit kills it.
func (s *servedCall) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.call(ctx, req, func(ctx context.Context) (sandbox.Response, error) { return s.sb.Spawn(ctx, req) })
}

// SpawnStreaming is Spawn with the output written to stdout and stderr
// as the serve sends it.
func (s *servedCall) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return s.call(ctx, req, func(ctx context.Context) (sandbox.Response, error) {
		return s.sb.SpawnStreaming(ctx, req, stdout, stderr)
	})
}

// call runs one call, pinging the serve meanwhile (see Spawn).
func (s *servedCall) call(ctx context.Context, req sandbox.Request, run func(context.Context) (sandbox.Response, error)) (sandbox.Response, error) {
	start := time.Now()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := s.watch(cctx, cancel)
	defer stop()
	resp, err := run(cctx)
	if ctx.Err() != nil || !errors.Is(context.Cause(cctx), errServeStalled) {
		return resp, err
	}
	if req.Timeout > 0 && time.Since(start) >= req.Timeout {
		err = sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("command %q: timed out after %s (the serve on %s stopped answering)", req.Command, req.Timeout, s.path), nil)
	} else {
		err = sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("command %q: the serve on %s stopped answering (no answer for %s): the call is abandoned; the serve kills it if it is ever continued", req.Command, s.path, serveStallTimeout), errServeStalled)
	}
	resp.Err = err
	return resp, err
}

// watch pings the serve every serveLivenessInterval until stop, and
// cancels the call with errServeStalled when a ping goes unanswered for
// serveStallTimeout. Other failures are the call's to report.
func (s *servedCall) watch(ctx context.Context, stall context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(serveLivenessInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pctx, cancel := context.WithTimeout(ctx, serveStallTimeout)
			_, err := s.client.Describe(pctx)
			stalled := err != nil && notAnswering(ctx, pctx)
			cancel()
			if stalled {
				stall(errServeStalled)
				return
			}
		}
	}()
	return func() { close(done) }
}

// close releases the call's handle in the serve, waiting for it at most
// serveCloseGrace, and closes the connection, which ends the release if
// it is still waiting: a handle left behind costs the serve a few bytes.
func (s *servedCall) close(log hclog.Logger) {
	released := make(chan error, 1)
	go func() { released <- s.sb.Close() }()
	select {
	case err := <-released:
		if err != nil {
			log.Debug("releasing the served sandbox's handle", "error", err)
		}
	case <-time.After(serveCloseGrace):
		log.Debug("the serve did not release the sandbox's handle in time", "grace", serveCloseGrace)
	}
	_ = s.cc.Close()
}
