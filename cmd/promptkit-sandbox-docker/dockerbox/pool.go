package dockerbox

import (
	"context"
	"sync"
	"time"
)

// Pool bounds. A pool keeps its containers per spec (command, arguments,
// environment): a container runs one command from the moment it starts,
// so it can only serve calls of that command. The specs a sandbox's hooks
// use are few; past maxPoolSpecs the least recently used one is dropped.
const (
	maxPoolSpecs   = 8
	prepareTimeout = 60 * time.Second
	maxPoolBackoff = 30 * time.Second
	closeGrace     = 10 * time.Second
	maxWait        = 2 * time.Second
)

// pool keeps up to size containers created, attached and started ahead
// of demand for each recently used spec. Each is handed to exactly one
// call and then removed; a call that finds none ready starts its own, as
// without a pool, while the pool refills in the background.
type pool struct {
	size   int
	r      runner
	reaper *reaper         // removes what the pool drops
	ctx    context.Context // ends with the pool: aborts refills
	cancel context.CancelFunc
	wg     sync.WaitGroup // refills in flight

	mu     sync.Mutex
	closed bool
	specs  map[string]*poolSpec
	clock  uint64
}

type poolSpec struct {
	spec     runSpec
	ready    []prepared // oldest first
	filling  int
	waiting  int           // calls waiting for a refill in flight
	changed  chan struct{} // closed (and replaced) when a refill ends
	used     uint64        // the pool's clock at the last take
	failures int
	retryAt  time.Time // after a failed refill, none before this
}

func newPool(size int, r runner, rp *reaper) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &pool{size: size, r: r, reaper: rp, ctx: ctx, cancel: cancel, specs: make(map[string]*poolSpec)}
}

// warmer is implemented by prepared calls that become ready some time
// after prepare returns (a warm exec, once its wrapper runs): the pool
// holds them out of reach until then.
type warmer interface {
	warm(ctx context.Context) error
}

// stale is implemented by prepared calls that can go bad while they wait
// (a warm exec whose container restarted): take drops those.
type stale interface{ stale() bool }

// take returns a ready container for spec, or nil when there is none.
// Without one it starts refilling spec's share of the pool; with one the
// caller calls replenish once its call is done. When none is
// ready but a refill is under way that no other call waits for, it waits
// for that one: it is further along than a container the call would
// start itself. It gives up waiting when ctx ends.
func (p *pool) take(ctx context.Context, spec runSpec) prepared {
	key := spec.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	ps := p.specs[key]
	if ps == nil {
		ps = &poolSpec{spec: spec, changed: make(chan struct{})}
		p.specs[key] = ps
		p.evictLocked(key)
	}
	p.clock++
	ps.used = p.clock
	// Waiting is bounded so a slow refill (an engine under load) leaves
	// the call time to start its own.
	waitCtx, cancel := context.WithTimeout(ctx, maxTakeWait(ctx))
	defer cancel()
	for {
		for len(ps.ready) > 0 {
			got := ps.ready[0]
			ps.ready[0] = nil
			ps.ready = ps.ready[1:]
			if st, ok := got.(stale); ok && st.stale() {
				p.reaper.reap(got)
				continue
			}
			// The refill waits for replenish, after the call: started
			// now, it would compete with the call for the engine.
			return got
		}
		if p.closed || p.specs[key] != ps {
			return nil // closed, or the spec was dropped while we waited
		}
		p.fillLocked(key, ps)
		if ps.filling <= ps.waiting || waitCtx.Err() != nil {
			return nil
		}
		ps.waiting++
		changed := ps.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-waitCtx.Done():
		}
		p.mu.Lock()
		ps.waiting--
	}
}

// maxTakeWait is how long a call may wait for a refill under way: a
// quarter of what is left of its time, at most maxWait.
func maxTakeWait(ctx context.Context) time.Duration {
	d := maxWait
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/4)
	}
	return max(d, 0)
}

// replenish refills spec's share of the pool; a call that took a warm
// one calls it when it is done.
func (p *pool) replenish(spec runSpec) {
	key := spec.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.specs[key]; ps != nil && !p.closed {
		p.fillLocked(key, ps)
	}
}

func (p *pool) fillLocked(key string, ps *poolSpec) {
	if time.Now().Before(ps.retryAt) {
		return
	}
	for len(ps.ready)+ps.filling < p.size {
		ps.filling++
		p.wg.Add(1)
		go p.fill(key, ps)
	}
}

// fill prepares one container for ps. A failure is not reported: the
// next call without a ready container starts its own and reports its own
// error. It only delays the next refill.
func (p *pool) fill(key string, ps *poolSpec) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(p.ctx, prepareTimeout)
	defer cancel()
	pr, err := p.r.prepare(ctx, ps.spec)
	if w, ok := pr.(warmer); ok && err == nil {
		if err = w.warm(ctx); err != nil {
			pr.discard()
			pr = nil
		}
	}

	p.mu.Lock()
	ps.filling--
	close(ps.changed)
	ps.changed = make(chan struct{})
	switch {
	case err != nil:
		ps.failures++
		ps.retryAt = time.Now().Add(min(time.Duration(1<<min(ps.failures, 10))*100*time.Millisecond, maxPoolBackoff))
	case p.closed || p.specs[key] != ps:
		// Dropped while it was prepared.
	default:
		ps.failures, ps.retryAt = 0, time.Time{}
		ps.ready = append(ps.ready, pr)
		pr = nil
	}
	p.mu.Unlock()
	if pr != nil {
		pr.discard()
	}
}

// evictLocked drops the least recently used spec other than keep once
// there are more than maxPoolSpecs.
func (p *pool) evictLocked(keep string) {
	if len(p.specs) <= maxPoolSpecs {
		return
	}
	var oldest string
	var at uint64
	for k, ps := range p.specs {
		if k != keep && (oldest == "" || ps.used < at) {
			oldest, at = k, ps.used
		}
	}
	ps := p.specs[oldest]
	delete(p.specs, oldest)
	for _, pr := range ps.ready {
		p.reaper.reap(pr)
	}
}

// ready is the number of containers ready for calls.
func (p *pool) ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ps := range p.specs {
		n += len(ps.ready)
	}
	return n
}

// close stops refilling, waits for refills and removals in flight, and
// removes every ready container.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	// Refills in flight are let finish (and their containers removed):
	// the engine goes on creating a container whose request was
	// abandoned, which would leave it behind. Past closeGrace they are
	// abandoned all the same.
	stop := time.AfterFunc(closeGrace, p.cancel)
	p.wg.Wait()
	stop.Stop()
	p.cancel()
	var wg sync.WaitGroup
	for _, ps := range p.specs {
		for _, pr := range ps.ready {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pr.discard()
			}()
		}
		ps.ready = nil
	}
	wg.Wait()
}
