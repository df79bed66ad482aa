package provision

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

type fakeBox struct {
	id       string
	idle     time.Time
	timeout  time.Duration
	tornDown atomic.Int32
}

func (b *fakeBox) Info() plugin.Provisioned {
	return plugin.Provisioned{ID: b.id, Token: "secret-" + b.id}
}
func (b *fakeBox) IdleSince() time.Time       { return b.idle }
func (b *fakeBox) IdleTimeout() time.Duration { return b.timeout }
func (b *fakeBox) Teardown(context.Context) error {
	b.tornDown.Add(1)
	return nil
}

func TestHolderListsReleasesAndCloses(t *testing.T) {
	h := NewHolder(nil)
	a, b := &fakeBox{id: "a", timeout: time.Hour}, &fakeBox{id: "b", timeout: time.Hour}
	for _, box := range []*fakeBox{a, b} {
		if err := h.Add(box); err != nil {
			t.Fatal(err)
		}
	}
	list := h.List()
	if len(list) != 2 || list[0].Token != "" || list[1].Token != "" {
		t.Fatalf("List: %+v (want two, no tokens)", list)
	}
	if err := h.Release(context.Background(), "a", plugin.ReleaseOptions{}); err != nil || a.tornDown.Load() != 1 {
		t.Fatalf("Release: %v, torn down %d times", err, a.tornDown.Load())
	}
	if err := h.Release(context.Background(), "a", plugin.ReleaseOptions{}); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Fatalf("second Release: %v, want ErrNotProvisioned", err)
	}
	if err := h.Close(); err != nil || b.tornDown.Load() != 1 || a.tornDown.Load() != 1 {
		t.Fatalf("Close: %v; torn down a %d, b %d times", err, a.tornDown.Load(), b.tornDown.Load())
	}
	c := &fakeBox{id: "c"}
	if err := h.Add(c); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}
}

// purgeBox keeps something past its teardown.
type purgeBox struct {
	fakeBox
	purged atomic.Int32
}

func (b *purgeBox) Purge(context.Context) error {
	if b.tornDown.Load() != 1 {
		return errors.New("purged before its teardown")
	}
	b.purged.Add(1)
	return nil
}

func TestHolderPurgesOnlyWhenAsked(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	kept, gone := &purgeBox{fakeBox: fakeBox{id: "kept", timeout: time.Hour}}, &purgeBox{fakeBox: fakeBox{id: "gone", timeout: time.Hour}}
	for _, b := range []*purgeBox{kept, gone} {
		if err := h.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Release(context.Background(), "kept", plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(context.Background(), "gone", plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if kept.purged.Load() != 0 || gone.purged.Load() != 1 || gone.tornDown.Load() != 1 {
		t.Fatalf("purged: kept %d, gone %d times (want 0, 1); gone torn down %d", kept.purged.Load(), gone.purged.Load(), gone.tornDown.Load())
	}
}

func TestHolderReapsIdleBoxes(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	idle := &fakeBox{id: "idle", idle: time.Now().Add(-time.Minute), timeout: time.Second}
	busy := &fakeBox{id: "busy", timeout: time.Second} // a client is connected: zero IdleSince
	fresh := &fakeBox{id: "fresh", idle: time.Now(), timeout: time.Hour}
	for _, box := range []*fakeBox{idle, busy, fresh} {
		if err := h.Add(box); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * ReapEvery)
	for idle.tornDown.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle box was not reaped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if busy.tornDown.Load() != 0 || fresh.tornDown.Load() != 0 || len(h.List()) != 2 {
		t.Fatalf("reaped more than the idle box: busy %d fresh %d, %d left", busy.tornDown.Load(), fresh.tornDown.Load(), len(h.List()))
	}
}

type mortalBox struct {
	fakeBox
	dead atomic.Value // string
}

func (b *mortalBox) Info() plugin.Provisioned {
	return plugin.Provisioned{ID: b.id, Details: map[string]string{"k": "v"}}
}

func (b *mortalBox) Dead() string {
	s, _ := b.dead.Load().(string)
	return s
}

// TestHolderListsDeadBoxes: a Mortal box is listed running, then dead
// with why once it says so; its own Details are not written to; a box
// that cannot tell has no state.
func TestHolderListsDeadBoxes(t *testing.T) {
	h := NewHolder(nil)
	m := &mortalBox{fakeBox: fakeBox{id: "m", timeout: time.Hour}}
	if err := h.Add(m); err != nil {
		t.Fatal(err)
	}
	if err := h.Add(&fakeBox{id: "f", timeout: time.Hour}); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	state := func() map[string]string {
		got := map[string]string{}
		for _, p := range h.List() {
			got[p.ID] = p.Details[State]
		}
		return got
	}
	if got := state(); got["m"] != StateRunning || got["f"] != "" {
		t.Errorf("states %v, want m running and f none", got)
	}
	m.dead.Store("stopped; its output ended: boom (exit code 7)")
	if got := state(); got["m"] != "dead: stopped; its output ended: boom (exit code 7)" {
		t.Errorf("state of the dead box: %q", got["m"])
	}
	for _, p := range h.List() {
		if p.ID == "m" && p.Details["k"] != "v" {
			t.Errorf("details lost: %v", p.Details)
		}
	}
}

// followBox records whether it was told that a Purge follows, before its
// teardown.
type followBox struct {
	purgeBox
	told atomic.Int32
}

func (b *followBox) PurgeFollows() {
	if b.tornDown.Load() == 0 {
		b.told.Add(1)
	}
}

// TestHolderTellsOnlyTheReleaseThatPurges: a Release with Purge tells
// the box before tearing it down; a plain one does not; and a Release
// with Purge that comes after another Release took the box (the idle
// reaper's, say) finds nothing and tells nothing, so the box is not
// left expecting a Purge that never comes.
func TestHolderTellsOnlyTheReleaseThatPurges(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	purged, plain := &followBox{purgeBox: purgeBox{fakeBox: fakeBox{id: "purged", timeout: time.Hour}}}, &followBox{purgeBox: purgeBox{fakeBox: fakeBox{id: "plain", timeout: time.Hour}}}
	for _, b := range []*followBox{purged, plain} {
		if err := h.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Release(context.Background(), "purged", plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(context.Background(), "plain", plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(context.Background(), "plain", plugin.ReleaseOptions{Purge: true}); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Fatalf("a Release with Purge after the box went: %v, want ErrNotProvisioned", err)
	}
	if purged.told.Load() != 1 || purged.purged.Load() != 1 || plain.told.Load() != 0 || plain.purged.Load() != 0 {
		t.Fatalf("told/purged: purged %d/%d (want 1/1), plain %d/%d (want 0/0)", purged.told.Load(), purged.purged.Load(), plain.told.Load(), plain.purged.Load())
	}
}
