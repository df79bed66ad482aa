package kubebox

import (
	"context"
	"sync"
	"time"
)

// Timing of the warm pool.
const (
	// refillWait bounds how long a call that finds no warm session waits
	// for one already being opened (never more than a quarter of the
	// call's remaining time) before it opens its own.
	refillWait = 2 * time.Second
	// maxBackoff bounds the pause between failed refills.
	maxBackoff = 5 * time.Second
	// poolCloseGrace bounds how long Close waits for the sessions it ends.
	poolCloseGrace = 5 * time.Second
)

// pool keeps sessions open ahead of calls, their wrappers started and
// waiting, so a call skips the exec's start. A wrapper takes its command
// from its call, so any session serves any call to its target.
type pool struct {
	s    *Sandbox
	size int

	mu      sync.Mutex
	ready   []*session
	filling int           // sessions being opened
	cooling int           // slots backing off after a failed refill
	changed chan struct{} // closed and replaced when ready or filling change
	fails   int           // refills failed in a row
	closed  bool
	quit    chan struct{}  // closed by close
	all     sync.WaitGroup // the fill goroutines
}

func newPool(s *Sandbox, size int) *pool {
	return &pool{s: s, size: size, changed: make(chan struct{}), quit: make(chan struct{})}
}

// signal wakes the calls waiting on the pool. Called with p.mu held.
func (p *pool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// take returns a ready session for t, or nil when none comes in time.
func (p *pool) take(ctx context.Context, t target) *session {
	wait := refillWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/4)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		for len(p.ready) > 0 {
			ss := p.ready[0]
			p.ready = p.ready[1:]
			if ss.t != t || ss.ended() {
				// Its pod was replaced, or its stream ended (the pod
				// went away, the connection was cut).
				ss.abandon()
				continue
			}
			p.refillLocked(t)
			p.mu.Unlock()
			return ss
		}
		p.refillLocked(t)
		filling, changed := p.filling, p.changed
		p.mu.Unlock()
		if filling == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// refill starts opening sessions for t until the pool is full.
func (p *pool) refill(t target) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refillLocked(t)
}

func (p *pool) refillLocked(t target) {
	for !p.closed && len(p.ready)+p.filling+p.cooling < p.size {
		p.filling++
		p.all.Add(1)
		go p.fill(t)
	}
}

// fill opens one session and adds it to the pool once its wrapper waits.
// A failure backs off, so a pod that is gone is not hammered.
func (p *pool) fill(t target) {
	defer p.all.Done()
	ss := p.s.startSession(t)
	ok := false
	select {
	case <-ss.f.Started():
		ok = true
	case <-ss.done:
	}
	p.mu.Lock()
	p.filling--
	late := ok && p.closed
	if ok && !p.closed {
		p.ready = append(p.ready, ss)
		p.fails = 0
	} else {
		ss.abandon()
	}
	if !ok {
		p.fails++
		p.cooling++
	}
	fails := p.fails
	p.signal()
	p.mu.Unlock()
	if late {
		// Opened after close: close waits for this goroutine, and so
		// for the wrapper to be gone.
		select {
		case <-ss.done:
		case <-time.After(poolCloseGrace):
			ss.cancel()
		}
	}
	if ok {
		return
	}
	// The slot stays taken while this backs off, so a pod that is gone
	// is not hammered; calls meanwhile open their own sessions and get
	// the error that says why.
	select {
	case <-time.After(min(50*time.Millisecond<<min(fails, 10), maxBackoff)):
	case <-p.quit:
	}
	p.mu.Lock()
	p.cooling--
	p.mu.Unlock()
}

// close ends every session: waiting wrappers exit without running
// anything. Calling it again does nothing.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.quit)
	ready := p.ready
	p.ready = nil
	p.signal()
	p.mu.Unlock()
	for _, ss := range ready {
		ss.abandon()
	}
	done := make(chan struct{})
	go func() {
		p.all.Wait()
		for _, ss := range ready {
			<-ss.done
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(poolCloseGrace):
		for _, ss := range ready {
			ss.cancel()
		}
	}
}
