package resident

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// fakeSession is a resident whose stream the test ends at will.
type fakeSession struct {
	id     int
	key    string
	c      *Client
	end    *io.PipeWriter
	mu     sync.Mutex
	closed bool
}

func (f *fakeSession) Client() *Client { return f.c }

func (f *fakeSession) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.die()
}

func (f *fakeSession) die() {
	f.end.Close()
	<-f.c.done
}

func (f *fakeSession) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// starter counts starts and fails them while fail is set.
type starter struct {
	n    int
	fail error
	all  []*fakeSession
}

func (s *starter) start(_ context.Context, key string) (*fakeSession, error) {
	s.n++
	if s.fail != nil {
		return nil, s.fail
	}
	r, w := io.Pipe()
	f := &fakeSession{id: s.n, key: key, c: NewClient(r, io.Discard), end: w}
	s.all = append(s.all, f)
	return f, nil
}

func TestKeeperFailedOpenIsFinal(t *testing.T) {
	t.Parallel() // it waits out RetryInterval
	st := &starter{fail: errors.New("read-only root")}
	k := NewKeeper(st.start, nil)
	if err := k.Open(context.Background(), "c1"); err == nil || err.Error() != "read-only root" {
		t.Fatalf("Open = %v, want the start's error", err)
	}
	st.fail = nil
	time.Sleep(RetryInterval + 100*time.Millisecond)
	if _, ok := k.Session(context.Background(), "c1"); ok {
		t.Fatal("a session after a failed open")
	}
	if st.n != 1 {
		t.Fatalf("%d starts, want 1: a failed open is final", st.n)
	}
}

func TestKeeperReplacesADeadResidentAtMostOncePerInterval(t *testing.T) {
	t.Parallel() // it waits out RetryInterval
	st := &starter{}
	k := NewKeeper(st.start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	first, ok := k.Session(ctx, "c1")
	if !ok || first.id != 1 {
		t.Fatalf("Session = %v, %v; want the first", first, ok)
	}
	first.die()
	if _, ok := k.Session(ctx, "c1"); ok {
		t.Fatal("a dead resident replaced within the retry interval")
	}
	time.Sleep(RetryInterval + 100*time.Millisecond)
	second, ok := k.Session(ctx, "c1")
	if !ok || second.id != 2 {
		t.Fatalf("Session = %v, %v; want a second resident", second, ok)
	}
	if !first.isClosed() {
		t.Fatal("the dead resident was not closed")
	}
	if again, _ := k.Session(ctx, "c1"); again != second || st.n != 2 {
		t.Fatalf("a live resident was not reused: %v, %d starts", again, st.n)
	}
}

func TestKeeperRetriesAFailedRestart(t *testing.T) {
	t.Parallel() // it waits out RetryInterval
	st := &starter{}
	k := NewKeeper(st.start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	st.all[0].die()
	st.fail = errors.New("container restarting")
	time.Sleep(RetryInterval + 100*time.Millisecond)
	if _, ok := k.Session(ctx, "c1"); ok || st.n != 2 {
		t.Fatalf("ok = %v after %d starts, want a failed second start", ok, st.n)
	}
	st.fail = nil
	if _, ok := k.Session(ctx, "c1"); ok || st.n != 2 {
		t.Fatalf("restarted within the interval after a failure (%d starts)", st.n)
	}
	time.Sleep(RetryInterval + 100*time.Millisecond)
	if s, ok := k.Session(ctx, "c1"); !ok || s.id != 3 {
		t.Fatalf("Session = %v, %v; want a third start", s, ok)
	}
}

func TestKeeperFollowsAMove(t *testing.T) {
	st := &starter{}
	k := NewKeeper(st.start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "pod-a"); err != nil {
		t.Fatal(err)
	}
	// At once, not after the retry interval: the old place is gone.
	s, ok := k.Session(ctx, "pod-b")
	if !ok || s.key != "pod-b" || s.id != 2 {
		t.Fatalf("Session(pod-b) = %+v, %v; want a resident started in pod-b", s, ok)
	}
	if !st.all[0].isClosed() {
		t.Fatal("the resident in pod-a was left running")
	}
}

func TestKeeperClose(t *testing.T) {
	t.Parallel() // it waits out RetryInterval
	st := &starter{}
	k := NewKeeper(st.start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	k.Close()
	if !st.all[0].isClosed() {
		t.Fatal("Close left the resident running")
	}
	time.Sleep(RetryInterval + 100*time.Millisecond)
	if _, ok := k.Session(ctx, "c1"); ok || st.n != 1 {
		t.Fatalf("a resident after Close (%d starts)", st.n)
	}
}

// TestKeeperDoesNotQueueCallsBehindAStart: while one call starts a
// resident, the others go without it at once instead of waiting.
func TestKeeperDoesNotQueueCallsBehindAStart(t *testing.T) {
	t.Parallel() // it waits out RetryInterval
	st := &starter{}
	gate := make(chan struct{})
	var gated bool
	var mu sync.Mutex
	start := func(ctx context.Context, key string) (*fakeSession, error) {
		mu.Lock()
		wait := gated
		mu.Unlock()
		if wait {
			<-gate
		}
		mu.Lock()
		defer mu.Unlock()
		return st.start(ctx, key)
	}
	k := NewKeeper(start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	first := st.all[0]
	gated = true
	mu.Unlock()
	first.die()
	time.Sleep(RetryInterval + 100*time.Millisecond)

	restarted := make(chan *fakeSession)
	go func() {
		s, _ := k.Session(ctx, "c1")
		restarted <- s
	}()
	// Wait until that call is inside the start.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		k.mu.Lock()
		starting := k.starting
		k.mu.Unlock()
		if starting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restart never began")
		}
	}
	begin := time.Now()
	if _, ok := k.Session(ctx, "c1"); ok {
		t.Fatal("a resident while the restart is still running")
	}
	if waited := time.Since(begin); waited > 100*time.Millisecond {
		t.Fatalf("a second call waited %v for the restart", waited)
	}
	close(gate)
	if s := <-restarted; s == nil || s.id != 2 {
		t.Fatalf("the restarting call got %+v, want the second resident", s)
	}
	if s, ok := k.Session(ctx, "c1"); !ok || s.id != 2 {
		t.Fatalf("after the restart: %+v, %v", s, ok)
	}
}

// TestKeeperCloseDuringStart: a resident that finishes starting after
// the sandbox closed is closed, not kept.
func TestKeeperCloseDuringStart(t *testing.T) {
	st := &starter{}
	entered, gate := make(chan struct{}), make(chan struct{})
	calls := 0
	start := func(ctx context.Context, key string) (*fakeSession, error) {
		calls++
		if calls == 2 {
			close(entered)
			<-gate
		}
		return st.start(ctx, key)
	}
	k := NewKeeper(start, nil)
	ctx := context.Background()
	if err := k.Open(ctx, "pod-a"); err != nil {
		t.Fatal(err)
	}
	got := make(chan bool)
	go func() {
		_, ok := k.Session(ctx, "pod-b")
		got <- ok
	}()
	<-entered
	k.Close()
	close(gate)
	if <-got {
		t.Fatal("a resident handed out after Close")
	}
	if len(st.all) != 2 || !st.all[1].isClosed() {
		t.Fatal("the resident that started after Close is still running")
	}
}
