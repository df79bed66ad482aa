package remoteproc

import (
	"context"
	"sync"
)

// StartsInFlight bounds the execs this process has starting at once in
// one target (a container, a pod's container): the rest wait here, in
// order, until one of those has its process running.
//
// A container runtime starts a container's execs one at a time
// (containerd's runc shim holds one lock across each start, and answers
// nothing else about the container meanwhile), and an exec it was asked
// for runs to its end even when the client has gone (the CRI's exec is
// not tied to the client's connection). So a burst of calls queued in
// the runtime makes every start slow and the container's state
// unanswerable, and a call cancelled there still costs a start; queued
// here, a cancelled call costs nothing, and the runtime's queue stays
// short. Four keeps the client side of several starts (the API server's
// and the kubelet's part, a TLS handshake) overlapping with the
// runtime's.
const StartsInFlight = 4

// gate is the process's admission of exec starts, per target.
var gate = startGate{limit: StartsInFlight}

// startGate admits at most limit starts at once per key; a key's slot
// is dropped when nothing holds or waits for it.
type startGate struct {
	limit int
	mu    sync.Mutex
	slots map[string]*gateSlot
}

type gateSlot struct {
	sem   chan struct{}
	users int // holding or waiting
}

// enter waits for a start slot of key, until ctx ends. The release it
// returns frees the slot; calling it again does nothing.
func (g *startGate) enter(ctx context.Context, key string) (release func(), err error) {
	g.mu.Lock()
	if g.slots == nil {
		g.slots = map[string]*gateSlot{}
	}
	s := g.slots[key]
	if s == nil {
		s = &gateSlot{sem: make(chan struct{}, g.limit)}
		g.slots[key] = s
	}
	s.users++
	g.mu.Unlock()
	select {
	case s.sem <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-s.sem
				g.leave(key, s)
			})
		}, nil
	case <-ctx.Done():
		g.leave(key, s)
		return nil, ctx.Err()
	}
}

func (g *startGate) leave(key string, s *gateSlot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(g.slots, key)
	}
}
