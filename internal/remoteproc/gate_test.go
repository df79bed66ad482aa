package remoteproc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStartGateAdmitsLimitAtOnce(t *testing.T) {
	g := startGate{limit: 2}
	ctx := context.Background()
	r1, err1 := g.enter(ctx, "a")
	r2, err2 := g.enter(ctx, "a")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// Another key has slots of its own.
	rb, err := g.enter(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	rb()
	third := make(chan func(), 1)
	go func() {
		r, err := g.enter(ctx, "a")
		if err != nil {
			t.Error(err)
		}
		third <- r
	}()
	select {
	case <-third:
		t.Fatal("a third start went in with two holding a limit of two")
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	r1() // a second release frees nothing more
	var r3 func()
	select {
	case r3 = <-third:
	case <-time.After(5 * time.Second):
		t.Fatal("the third start still waits after a release")
	}
	// Cancelled while it waits: it gets no slot and holds nothing.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.enter(cctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("enter with both slots held = %v, want the context's deadline", err)
	}
	r2()
	r3()
	if n := waiting(&g, "a"); n != 0 || len(g.slots) != 0 {
		t.Errorf("after every release: %d users of a, %d keys; want none", n, len(g.slots))
	}
}

// gatedTarget counts the execs in flight in it; each runs until its
// stdin ends, after its wrapper reported its PID (as a real wrapper
// does before it reads its call).
type gatedTarget struct {
	name              string
	inFlight, maxSeen atomic.Int32
	execs             atomic.Int32
	hold              chan struct{} // closed: the execs may report their PID
}

func (g *gatedTarget) String() string { return g.name }

func (g *gatedTarget) Exec(ctx context.Context, _ []string, stdin io.Reader, _, stderr io.Writer) (int, error) {
	g.execs.Add(1)
	n := g.inFlight.Add(1)
	for {
		m := g.maxSeen.Load()
		if n <= m || g.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.hold:
	case <-ctx.Done():
		g.inFlight.Add(-1)
		return 0, ctx.Err()
	}
	g.inFlight.Add(-1)
	_, _ = io.WriteString(stderr, Prefix+"4242\n"+Prefix+"run\n")
	_, _ = io.Copy(io.Discard, stdin)
	_, _ = io.WriteString(stderr, Prefix+"exit:0\n")
	return 0, nil
}

func (g *gatedTarget) Explain(context.Context, error, string) error { return nil }

// TestEngineStartsFewExecsAtOnce: a burst of calls puts no more than
// StartsInFlight starts into the target at once, and a call given up
// while it waited never reaches the target.
func TestEngineStartsFewExecsAtOnce(t *testing.T) {
	tg := &gatedTarget{name: "gated " + strconv.FormatInt(time.Now().UnixNano(), 36), hold: make(chan struct{})}
	e := New(tg, Options{Mode: "test"})
	defer e.Close()
	const calls = 3 * StartsInFlight
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := e.Run(ctx, Call{Command: "true"}, io.Discard, io.Discard)
			errs <- err
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for waiting(&gate, tg.name) < calls && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// One more, given up while it waits behind the others.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := e.Run(ctx, Call{Command: "true"}, io.Discard, io.Discard)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call given up while it waited: err = %v, want its deadline", err)
	}
	if n := tg.execs.Load(); n != StartsInFlight {
		t.Errorf("%d execs reached the target while %d were held starting; want %d", n, StartsInFlight, StartsInFlight)
	}
	close(tg.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := tg.maxSeen.Load(); got != StartsInFlight {
		t.Errorf("at most %d execs were starting at once; want %d", got, StartsInFlight)
	}
	if n := tg.execs.Load(); n != calls {
		t.Errorf("%d execs for %d calls; the given-up call must not reach the target", n, calls)
	}
	// A slot is given back once its wrapper runs, beside the call.
	for deadline := time.Now().Add(5 * time.Second); waiting(&gate, tg.name) != 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := waiting(&gate, tg.name); n != 0 {
		t.Errorf("%d starts still hold or wait for the gate", n)
	}
}

// waiting is how many starts of key hold or wait for a slot of g.
func waiting(g *startGate, key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.slots[key]; s != nil {
		return s.users
	}
	return 0
}
