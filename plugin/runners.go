package plugin

import "time"

// runnerIdle is how long a call's goroutine waits for the next call
// before it exits.
const runnerIdle = 10 * time.Second

// runners runs the calls of one Calls stream on goroutines kept from
// call to call. A call goes deep (the backend, then protobuf's
// reflection as its result is marshalled), and a new goroutine's stack
// is grown and copied on the way each time: a tenth of a plugin's CPU
// for a short call. A goroutine kept keeps the stack it grew; with none
// idle, a call starts one.
type runners struct {
	idle chan func() // unbuffered: a send succeeds only to a waiting runner
	done chan struct{}
}

func newRunners() *runners {
	return &runners{idle: make(chan func()), done: make(chan struct{})}
}

// run runs f on an idle runner, or on a new one when none waits.
func (r *runners) run(f func()) {
	select {
	case r.idle <- f:
	default:
		go r.loop(f)
	}
}

// stop ends the idle runners once the calls are over; run must not be
// called after it.
func (r *runners) stop() { close(r.done) }

func (r *runners) loop(f func()) {
	t := time.NewTimer(runnerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(runnerIdle)
		select {
		case f = <-r.idle:
		case <-t.C:
			return
		case <-r.done:
			return
		}
	}
}
