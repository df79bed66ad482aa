package provision

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// pauseBox is a fakeBox that can be paused.
type pauseBox struct {
	fakeBox
	paused  atomic.Bool
	resumes atomic.Int32
}

func (b *pauseBox) Pause(context.Context) error  { b.paused.Store(true); return nil }
func (b *pauseBox) Resume(context.Context) error { b.paused.Store(false); b.resumes.Add(1); return nil }
func (b *pauseBox) Paused() bool                 { return b.paused.Load() }

// IdleSince is long ago while the box is paused, now while it runs: only
// a paused box is ever past its idle timeout.
func (b *pauseBox) IdleSince() time.Time {
	if b.paused.Load() {
		return time.Now().Add(-time.Minute)
	}
	return time.Now()
}

// TestHolderPausesAndResumes: Pause reaches the box, Resume only a
// paused one; List says paused; a paused box past its idle
// timeout is kept; unknown ids and boxes that cannot pause are told
// apart.
func TestHolderPausesAndResumes(t *testing.T) {
	h := NewHolder(nil)
	defer h.Close()
	b := &pauseBox{fakeBox: fakeBox{id: "p", timeout: 10 * time.Millisecond}}
	plain := &fakeBox{id: "plain", timeout: time.Hour}
	ctx := context.Background()
	if err := h.Pause(ctx, "p"); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Fatalf("Pause before Add: %v", err)
	}
	for _, box := range []Box{b, plain} {
		if err := h.Add(box); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := h.Pause(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	if !b.Paused() {
		t.Error("not paused")
	}
	for _, info := range h.List() {
		if want := map[string]string{"p": StatePaused, "plain": ""}[info.ID]; info.Details[State] != want {
			t.Errorf("%s: state %q, want %q", info.ID, info.Details[State], want)
		}
	}
	time.Sleep(3 * ReapEvery)
	if b.tornDown.Load() != 0 {
		t.Fatal("a paused box was released as idle")
	}
	for range 2 {
		if err := h.Resume(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	if b.resumes.Load() != 1 {
		t.Errorf("%d resumes, want 1", b.resumes.Load())
	}
	if err := h.Pause(ctx, "plain"); !errors.Is(err, plugin.ErrCannotPause) {
		t.Errorf("Pause of a box that cannot: %v", err)
	}
}
