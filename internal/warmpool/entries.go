package warmpool

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Entries keeps a Pool for each configuration entry that asks for one (a
// codegen provider's `warm: N`), each of the entry's own size: the items
// are whole sandboxes, started ahead of the Provisions that claim them.
// An entry's pool starts filling FillDelay after Prewarm, refills
// ReplenishDelay after each claim, and is drained by Close. At most
// MaxKeys entries are pooled; a claim for another is told so.
type Entries[I Item] struct {
	reaper Reaper

	mu     sync.Mutex
	closed bool
	pools  map[string]*Pool[I]
}

const (
	// FillDelay is how long after Prewarm an entry's pool starts
	// filling: a host that only validates its config (which is when
	// Prewarm is called) closes before then and starts nothing.
	FillDelay = 500 * time.Millisecond
	// ReplenishDelay is how long after a claim its refill starts, so
	// that starting a sandbox does not compete with the claimer's first
	// calls.
	ReplenishDelay = 500 * time.Millisecond
)

// Why a claim found nothing (the second result of Claim).
const (
	WhyEmpty = "the pool had no sandbox ready"
	WhyFull  = "the provider pools no more entries"
)

// EntryKey is what makes two requests interchangeable: the entry's name
// and its configuration (json sorts the keys).
func EntryKey(name string, cfg map[string]any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	return name + "\x00" + string(b)
}

// pool returns key's pool, made with size when new; nil once closed, for
// a key that could not be made, or past MaxKeys entries.
func (e *Entries[I]) pool(key string, size int) *Pool[I] {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || key == "" || size <= 0 {
		return nil
	}
	if pl := e.pools[key]; pl != nil {
		return pl
	}
	if len(e.pools) >= MaxKeys {
		return nil
	}
	if e.pools == nil {
		e.pools = make(map[string]*Pool[I])
	}
	pl := New[I](size, &e.reaper)
	e.pools[key] = pl
	return pl
}

// Prewarm starts filling key's pool of size items with prepare, after
// FillDelay.
func (e *Entries[I]) Prewarm(key string, size int, prepare Prepare[I]) {
	time.AfterFunc(FillDelay, func() {
		if pl := e.pool(key, size); pl != nil {
			pl.Fill("", prepare)
		}
	})
}

// Claim takes a ready item of key's pool (of size items, made with
// prepare), waiting as Pool.Take does for a refill under way. Without
// one, why says so (WhyEmpty, WhyFull) and the caller starts its own.
func (e *Entries[I]) Claim(ctx context.Context, key string, size int, prepare Prepare[I]) (it I, ok bool, why string) {
	pl := e.pool(key, size)
	if pl == nil {
		return it, false, WhyFull
	}
	if it, ok = pl.Take(ctx, "", prepare); !ok {
		return it, false, WhyEmpty
	}
	time.AfterFunc(ReplenishDelay, func() { pl.Replenish("") })
	return it, true, ""
}

// Ready is the number of items ready to be claimed, over every entry.
func (e *Entries[I]) Ready() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, pl := range e.pools {
		n += pl.Ready()
	}
	return n
}

// Close drains every pool (refills in flight finish and are discarded,
// as every ready item is) and waits for the discards. Later claims find
// nothing.
func (e *Entries[I]) Close() {
	e.mu.Lock()
	e.closed = true
	pools := e.pools
	e.pools = nil
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, pl := range pools {
		wg.Go(pl.Close)
	}
	wg.Wait()
	e.reaper.Close()
}
