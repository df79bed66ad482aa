package warmpool

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// waitReady waits until e holds want ready items.
func waitReady[I Item](t *testing.T, e *Entries[I], want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.Ready() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d items ready, want %d", e.Ready(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEntriesPrewarmClaimRefill: Prewarm fills an entry's pool to its
// size after FillDelay, not before; a claim takes one, and the pool is
// refilled after ReplenishDelay; Close discards what is ready.
func TestEntriesPrewarmClaimRefill(t *testing.T) {
	var e Entries[*item]
	m := &maker{}
	key := EntryKey("code", map[string]any{"warm": 2, "image": "x"})
	e.Prewarm(key, 2, m.prepare)
	time.Sleep(FillDelay / 2)
	if n := m.n.Load(); n != 0 {
		t.Fatalf("%d prepared before FillDelay", n)
	}
	waitReady(t, &e, 2)
	it, ok, why := e.Claim(context.Background(), key, 2, m.prepare)
	if !ok || why != "" || it == nil {
		t.Fatalf("Claim = %v, %v, %q", it, ok, why)
	}
	if e.Ready() != 1 {
		t.Fatalf("%d ready right after the claim, want 1 (the refill waits ReplenishDelay)", e.Ready())
	}
	waitReady(t, &e, 2)
	e.Close()
	discarded := 0
	for _, it := range m.all {
		if it.discarded.Load() {
			discarded++
		}
	}
	if discarded != 2 || m.n.Load() != 3 {
		t.Errorf("after Close: %d of %d discarded, want the 2 ready", discarded, m.n.Load())
	}
	if _, ok, why := e.Claim(context.Background(), key, 2, m.prepare); ok || why != WhyFull {
		t.Errorf("Claim after Close: %v, %q", ok, why)
	}
}

// TestEntriesBounded: past MaxKeys entries a claim is told the provider
// pools no more; a key that could not be made (an unencodable config)
// is never pooled.
func TestEntriesBounded(t *testing.T) {
	var e Entries[*item]
	defer e.Close()
	m := &maker{}
	for i := range MaxKeys {
		if e.pool(EntryKey(fmt.Sprint("e", i), nil), 1) == nil {
			t.Fatalf("entry %d refused", i)
		}
	}
	if _, ok, why := e.Claim(context.Background(), EntryKey("one-more", nil), 1, m.prepare); ok || why != WhyFull {
		t.Errorf("claim past MaxKeys: %v, %q", ok, why)
	}
	if EntryKey("bad", map[string]any{"f": func() {}}) != "" {
		t.Error("an unencodable config made a key")
	}
	if EntryKey("a", map[string]any{"x": 1, "y": 2}) != EntryKey("a", map[string]any{"y": 2, "x": 1}) {
		t.Error("the same config in another order made another key")
	}
}
