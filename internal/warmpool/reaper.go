package warmpool

import "sync"

// Reaper discards items in the background, off the call's path; Close
// waits for every discard. After Close it discards at once. The zero
// value is ready to use.
type Reaper struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Reap discards it.
func (r *Reaper) Reap(it Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		it.Discard()
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		it.Discard()
	}()
}

// Close waits for the discards in flight.
func (r *Reaper) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
}

// Wait waits for the discards in flight, leaving the reaper open.
func (r *Reaper) Wait() { r.wg.Wait() }
