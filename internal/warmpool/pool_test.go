package warmpool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// item records its own discard.
type item struct {
	id        int
	stale     atomic.Bool
	discarded atomic.Bool
}

func (i *item) Discard()    { i.discarded.Store(true) }
func (i *item) Stale() bool { return i.stale.Load() }

// maker prepares numbered items, failing while fail is set.
type maker struct {
	n    atomic.Int32
	fail atomic.Bool
	mu   sync.Mutex
	all  []*item
}

func (m *maker) prepare(ctx context.Context) (*item, error) {
	if m.fail.Load() {
		return nil, errors.New("cannot prepare")
	}
	it := &item{id: int(m.n.Add(1))}
	m.mu.Lock()
	m.all = append(m.all, it)
	m.mu.Unlock()
	return it, nil
}

func awaitReady[I Item](t *testing.T, p *Pool[I], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Ready() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d ready, want %d", p.Ready(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoolServesEachItemOnceAndRefills(t *testing.T) {
	var r Reaper
	p := New[*item](2, &r)
	m := &maker{}
	p.Fill("k", m.prepare)
	awaitReady(t, p, 2)
	seen := map[int]bool{}
	for i := range 6 {
		it, ok := p.Take(context.Background(), "k", m.prepare)
		if !ok {
			t.Fatalf("take %d: none ready", i)
		}
		if seen[it.id] {
			t.Fatalf("item %d served twice", it.id)
		}
		seen[it.id] = true
		p.Replenish("k")
		awaitReady(t, p, 2)
	}
	p.Close()
	r.Close()
	for _, it := range m.all {
		if !seen[it.id] && !it.discarded.Load() {
			t.Errorf("item %d neither served nor discarded", it.id)
		}
	}
	if _, ok := p.Take(context.Background(), "k", m.prepare); ok {
		t.Error("a closed pool served an item")
	}
}

func TestPoolDropsStaleItems(t *testing.T) {
	var r Reaper
	p := New[*item](1, &r)
	m := &maker{}
	p.Fill("k", m.prepare)
	awaitReady(t, p, 1)
	m.all[0].stale.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	it, ok := p.Take(ctx, "k", m.prepare)
	if ok && it.id == 1 {
		t.Fatal("a stale item was served")
	}
	p.Close()
	r.Close()
	if !m.all[0].discarded.Load() {
		t.Error("the stale item was not discarded")
	}
}

func TestPoolBacksOffAfterFailures(t *testing.T) {
	var r Reaper
	p := New[*item](1, &r)
	defer p.Close()
	m := &maker{}
	m.fail.Store(true)
	if _, ok := p.Take(context.Background(), "k", m.prepare); ok {
		t.Fatal("served an item that failed to prepare")
	}
	time.Sleep(50 * time.Millisecond)
	m.fail.Store(false)
	// Within the backoff a take starts no refill.
	if _, ok := p.Take(context.Background(), "k", m.prepare); ok {
		t.Fatal("refilled within the backoff")
	}
	time.Sleep(backoff(1))
	p.Replenish("k")
	awaitReady(t, p, 1)
	if got := backoff(20); got != MaxBackoff {
		t.Errorf("backoff(20) = %s, want %s", got, MaxBackoff)
	}
}

func TestPoolEvictsLeastRecentlyUsedKey(t *testing.T) {
	var r Reaper
	p := New[*item](1, &r)
	m := &maker{}
	for k := range MaxKeys + 1 {
		p.Fill(fmt.Sprint(k), m.prepare)
		awaitReady(t, p, min(k+1, MaxKeys))
	}
	p.Close()
	r.Close()
	if !m.all[0].discarded.Load() {
		t.Error("the oldest key's item was not discarded when it was dropped")
	}
}

func TestHeldKeepsUntilClaimed(t *testing.T) {
	h := NewHeld(4)
	_, _ = h.Write([]byte("abcdef"))
	if h.Text() != "abcd" {
		t.Fatalf("held %q", h.Text())
	}
	var got []byte
	w := writerFunc(func(p []byte) (int, error) { got = append(got, p...); return len(p), nil })
	h.Claim(w)
	_, _ = h.Write([]byte("gh"))
	// The byte past the limit tells the claimant's own cap of the cut.
	if string(got) != "abcd\x00gh" {
		t.Fatalf("claimed %q", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
