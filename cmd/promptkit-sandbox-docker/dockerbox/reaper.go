package dockerbox

import "sync"

// reaper removes containers whose call has ended in the background, off
// the call's path; close waits for every removal. After close it removes
// at once.
type reaper struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (r *reaper) reap(pr prepared) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		pr.discard()
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		pr.discard()
	}()
}

// close waits for the removals in flight.
func (r *reaper) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
}
