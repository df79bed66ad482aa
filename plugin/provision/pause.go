package provision

import (
	"context"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// Pausable is a Box whose sandbox can be paused: its processes frozen
// (no CPU used), its files and memory kept, its endpoint answering every
// call with an error that says so, until Resume.
type Pausable interface {
	// Pause pauses it; pausing a paused one is no error.
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// Paused reports whether the sandbox is paused.
	Paused() bool
}

// Sleeper is a Pausable box that, idle past its timeout, is paused
// rather than released (docker_codegen's on_idle: pause), and resumed by
// its next call.
type Sleeper interface {
	Pausable
	// SleepsWhenIdle says whether it is paused when idle.
	SleepsWhenIdle() bool
	// Sleep pauses it so that its next call resumes it.
	Sleep(ctx context.Context) error
}

// StatePaused is the State of a paused sandbox.
const StatePaused = "paused"

// Pause pauses the box id. The box is asked even when paused: one
// paused while idle (a Sleeper) is then paused for good, until Resume.
func (h *Holder) Pause(ctx context.Context, id string) error {
	p, err := h.pausable(id)
	if err != nil {
		return err
	}
	if err := p.Pause(ctx); err != nil {
		return fmt.Errorf("pause %s: %w", id, err)
	}
	h.log.Info("codegen sandbox paused", "id", id)
	return nil
}

// Resume resumes the box id; resuming a running one does nothing.
func (h *Holder) Resume(ctx context.Context, id string) error {
	p, err := h.pausable(id)
	if err != nil || !p.Paused() {
		return err
	}
	if err := p.Resume(ctx); err != nil {
		return fmt.Errorf("resume %s: %w", id, err)
	}
	h.log.Info("codegen sandbox resumed", "id", id)
	return nil
}

func (h *Holder) pausable(id string) (Pausable, error) {
	h.mu.Lock()
	b, ok := h.boxes[id]
	h.mu.Unlock()
	if !ok {
		return nil, plugin.ErrNotProvisioned
	}
	p, ok := b.(Pausable)
	if !ok {
		return nil, plugin.ErrCannotPause
	}
	return p, nil
}

// paused reports a Pausable box that is paused.
func paused(b Box) bool {
	p, ok := b.(Pausable)
	return ok && p.Paused()
}
