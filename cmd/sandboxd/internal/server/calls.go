package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errShuttingDown refuses calls that arrive once shutdown has begun.
var errShuttingDown = errors.New("sandboxd is shutting down")

// calls tracks tool calls in flight, so shutdown can let them finish
// within a grace and cancel the rest — whatever transport carried them —
// and a session's end can cancel its own.
type calls struct {
	mu      sync.Mutex
	closing bool
	next    int
	cancels map[int]inFlight
	wg      sync.WaitGroup
}

type inFlight struct {
	session string
	cancel  context.CancelFunc
}

func newCalls() *calls { return &calls{cancels: map[int]inFlight{}} }

// begin registers a call of session; end must be called when it returns.
func (c *calls) begin(ctx context.Context, session string) (context.Context, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return nil, nil, errShuttingDown
	}
	ctx, cancel := context.WithCancel(ctx)
	id := c.next
	c.next++
	c.cancels[id] = inFlight{session, cancel}
	c.wg.Add(1)
	end := func() {
		c.mu.Lock()
		delete(c.cancels, id)
		c.mu.Unlock()
		cancel()
		c.wg.Done()
	}
	return ctx, end, nil
}

// drain refuses new calls, waits up to grace for those in flight, then
// cancels what is left and waits for it to return (each tool kills what
// it started when its context ends). It reports whether every call
// returned.
func (c *calls) drain(grace time.Duration) bool {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	if waitTimeout(&c.wg, grace) {
		return true
	}
	c.mu.Lock()
	for _, f := range c.cancels {
		f.cancel()
	}
	c.mu.Unlock()
	return waitTimeout(&c.wg, grace)
}

// cancelSession cancels the calls in flight of a session that has ended:
// an SSE stream that closed, a Streamable HTTP session deleted. Over SSE
// mcp-go runs a call on a context of its own, which the stream's end does
// not reach, and no reply can reach the client any more.
func (c *calls) cancelSession(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.cancels {
		if f.session == session {
			f.cancel()
		}
	}
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
