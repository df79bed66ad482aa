package warmpool

import (
	"context"
	"sync"
	"time"
)

// The pool's timing and bounds, one set for every backend.
const (
	// MaxSize bounds a pool's size a key, the pool and warm keys of the
	// backends: each item is a live container or exec session.
	MaxSize = 64
	// MaxKeys bounds the keys a pool keeps items for; past it the least
	// recently used key is dropped. The commands a sandbox's hooks run
	// are few, and each key holds up to the pool's size of live items.
	MaxKeys = 8
	// PrepareTimeout bounds one refill: creating and starting a container
	// on a loaded engine can take seconds, never a minute.
	PrepareTimeout = 60 * time.Second
	// MaxBackoff bounds the pause after failed refills (100 ms, doubled a
	// failure). A target that is gone is not hammered; one that comes
	// back is used again within this.
	MaxBackoff = 10 * time.Second
	// CloseGrace bounds how long Close lets refills in flight finish: an
	// engine goes on creating a container whose request was abandoned,
	// which would be left behind, so they are let finish and discarded.
	CloseGrace = 10 * time.Second
	// MaxWait bounds how long a call waits for a refill under way (never
	// more than a quarter of its remaining time) before it prepares its
	// own: a slow refill on a loaded engine must not eat the call's time.
	MaxWait = 2 * time.Second
)

// Item is one prepared thing.
type Item interface {
	// Discard releases the item (removes its container, ends its
	// session). It may block, is called once and off the call's path.
	Discard()
}

// Warmer is an item that becomes ready some time after its prepare
// returns (an exec session, once its wrapper runs): the pool holds it out
// of reach until Warm returns nil.
type Warmer interface {
	Warm(ctx context.Context) error
}

// Staler is an item that can go bad while it waits (a session whose
// stream ended): Take drops those.
type Staler interface {
	Stale() bool
}

// Prepare makes one item for a key.
type Prepare[I Item] func(ctx context.Context) (I, error)

// Pool keeps up to size items ready for each recently used key.
type Pool[I Item] struct {
	size   int
	reaper *Reaper
	ctx    context.Context // ends with the pool: aborts refills
	cancel context.CancelFunc
	wg     sync.WaitGroup // refills in flight

	mu     sync.Mutex
	closed bool
	keys   map[string]*share[I]
	clock  uint64
}

// share is one key's part of the pool.
type share[I Item] struct {
	prepare  Prepare[I]
	ready    []I // oldest first
	filling  int
	waiting  int           // calls waiting for a refill in flight
	changed  chan struct{} // closed (and replaced) when a refill ends
	used     uint64        // the pool's clock at the last take
	failures int
	retryAt  time.Time // after a failed refill, none before this
}

// New returns a pool of size items a key; what it drops goes to reaper.
func New[I Item](size int, reaper *Reaper) *Pool[I] {
	ctx, cancel := context.WithCancel(context.Background()) // #nosec G118 -- the pool keeps cancel and Close calls it: the pool's fills outlive any one call
	return &Pool[I]{size: size, reaper: reaper, ctx: ctx, cancel: cancel, keys: make(map[string]*share[I])}
}

// shareLocked returns key's share, made with prepare when it is new.
func (p *Pool[I]) shareLocked(key string, prepare Prepare[I]) *share[I] {
	sh := p.keys[key]
	if sh == nil {
		sh = &share[I]{prepare: prepare, changed: make(chan struct{})}
		p.keys[key] = sh
		p.evictLocked(key)
	}
	return sh
}

// Fill starts preparing items for key until its share is full, ahead of
// any call (a sandbox that opens warm).
func (p *Pool[I]) Fill(key string, prepare Prepare[I]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.fillLocked(key, p.shareLocked(key, prepare))
	}
}

// Take returns a ready item for key, or false when there is none. Without
// one it starts refilling key's share with prepare (the first prepare
// given for a key is the one kept); with one the caller calls Replenish
// once its call is done, so the refill does not compete with the call.
// When none is ready but a refill is under way that no other call waits
// for, it waits for that one (it is further along than an item the call
// would prepare itself), up to MaxWait or a quarter of ctx's time.
func (p *Pool[I]) Take(ctx context.Context, key string, prepare Prepare[I]) (I, bool) {
	var zero I
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return zero, false
	}
	sh := p.shareLocked(key, prepare)
	p.clock++
	sh.used = p.clock
	waitCtx, cancel := context.WithTimeout(ctx, maxTakeWait(ctx))
	defer cancel()
	for {
		for len(sh.ready) > 0 {
			got := sh.ready[0]
			sh.ready[0] = zero
			sh.ready = sh.ready[1:]
			if st, ok := any(got).(Staler); ok && st.Stale() {
				p.reaper.Reap(got)
				continue
			}
			return got, true
		}
		if p.closed || p.keys[key] != sh {
			return zero, false // closed, or the key was dropped while we waited
		}
		p.fillLocked(key, sh)
		if sh.filling <= sh.waiting || waitCtx.Err() != nil {
			return zero, false
		}
		sh.waiting++
		changed := sh.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-waitCtx.Done():
		}
		p.mu.Lock()
		sh.waiting--
	}
}

// maxTakeWait is how long a call may wait for a refill under way.
func maxTakeWait(ctx context.Context) time.Duration {
	d := MaxWait
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/4)
	}
	return max(d, 0)
}

// Replenish refills key's share; a call that took an item calls it when
// it is done.
func (p *Pool[I]) Replenish(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sh := p.keys[key]; sh != nil && !p.closed {
		p.fillLocked(key, sh)
	}
}

func (p *Pool[I]) fillLocked(key string, sh *share[I]) {
	if time.Now().Before(sh.retryAt) {
		return
	}
	for len(sh.ready)+sh.filling < p.size {
		sh.filling++
		p.wg.Add(1)
		go p.fill(key, sh)
	}
}

// backoff is the pause after the n-th failed refill in a row.
func backoff(n int) time.Duration {
	return min(100*time.Millisecond<<min(n-1, 10), MaxBackoff)
}

// fill prepares one item for sh. A failure is not reported: the next call
// without a ready item prepares its own and reports its own error. It
// only delays the next refill.
func (p *Pool[I]) fill(key string, sh *share[I]) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(p.ctx, PrepareTimeout)
	defer cancel()
	it, err := sh.prepare(ctx)
	if err == nil {
		if w, ok := any(it).(Warmer); ok {
			if err = w.Warm(ctx); err != nil {
				it.Discard()
			}
		}
	}

	p.mu.Lock()
	sh.filling--
	close(sh.changed)
	sh.changed = make(chan struct{})
	keep := false
	switch {
	case err != nil:
		sh.failures++
		sh.retryAt = time.Now().Add(backoff(sh.failures))
	case p.closed || p.keys[key] != sh:
		// Dropped while it was prepared.
	default:
		sh.failures, sh.retryAt = 0, time.Time{}
		sh.ready = append(sh.ready, it)
		keep = true
	}
	p.mu.Unlock()
	if err == nil && !keep {
		it.Discard()
	}
}

// evictLocked drops the least recently used key other than keep once
// there are more than MaxKeys.
func (p *Pool[I]) evictLocked(keep string) {
	if len(p.keys) <= MaxKeys {
		return
	}
	var oldest string
	var at uint64
	for k, sh := range p.keys {
		if k != keep && (oldest == "" || sh.used < at) {
			oldest, at = k, sh.used
		}
	}
	sh := p.keys[oldest]
	delete(p.keys, oldest)
	for _, it := range sh.ready {
		p.reaper.Reap(it)
	}
}

// Ready is the number of items ready for calls.
func (p *Pool[I]) Ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, sh := range p.keys {
		n += len(sh.ready)
	}
	return n
}

// Close stops refilling, waits for refills in flight (up to CloseGrace)
// and discards every ready item. Calling it again does nothing.
func (p *Pool[I]) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	stop := time.AfterFunc(CloseGrace, p.cancel)
	p.wg.Wait()
	stop.Stop()
	p.cancel()
	var wg sync.WaitGroup
	for _, sh := range p.keys {
		for _, it := range sh.ready {
			wg.Add(1)
			go func() {
				defer wg.Done()
				it.Discard()
			}()
		}
		sh.ready = nil
	}
	wg.Wait()
}
