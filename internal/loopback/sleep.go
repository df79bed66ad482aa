package loopback

import "sync"

// gate holds requests until its wake has run, once.
type gate struct {
	wake   func() error
	failed func(error) Answer

	once sync.Once
	err  error
}

func (g *gate) pass() error {
	g.once.Do(func() { g.err = g.wake() })
	return g.err
}

// Sleep has the forwarder's next request, a new connection's or an open
// one's, call wake before it goes on to the upstream; requests that come
// meanwhile wait for that one call. Once wake succeeds the forwarder
// serves as before; if it fails, every waiting request is answered with
// failed(err) and the next one tries again. For an upstream that is
// paused to save what it costs while unused, and resumed by its next
// client, who only waits.
func (f *Forwarder) Sleep(wake func() error, failed func(error) Answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gate = &gate{wake: wake, failed: failed}
}

// Asleep reports whether the forwarder waits for a wake.
func (f *Forwarder) Asleep() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gate != nil
}

// awaken passes a request through the gate, if there is one: false when
// it must be answered with the returned answer instead.
func (f *Forwarder) awaken() (Answer, bool) {
	f.mu.Lock()
	g := f.gate
	f.mu.Unlock()
	if g == nil {
		return nil, true
	}
	err := g.pass()
	f.mu.Lock()
	if f.gate == g {
		f.gate = nil // woken
		if err != nil {
			// Still asleep: the next request tries anew.
			f.gate = &gate{wake: g.wake, failed: g.failed}
		}
	}
	f.mu.Unlock()
	if err != nil {
		return g.failed(err), false
	}
	return nil, true
}
