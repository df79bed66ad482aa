// Package provision keeps the codegen sandboxes a provider has handed
// out: it answers List and Release, releases the ones nothing has used for
// their idle timeout, and releases them all when the plugin stops, so that
// nothing a provider started outlives it. A provider (docker_codegen,
// kubectl_codegen) supplies the Box that knows how to take one down.
package provision

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// Box is one provisioned sandbox.
type Box interface {
	// Info is what Provision returned for it.
	Info() plugin.Provisioned
	// IdleSince is when it last had no client connected, or the zero time
	// while one is.
	IdleSince() time.Time
	// IdleTimeout is how long it may go unused before it is released.
	IdleTimeout() time.Duration
	// Teardown removes everything made for it; it is called once.
	Teardown(ctx context.Context) error
}

// ErrClosed is an Add after Close: the plugin is stopping.
var ErrClosed = errors.New("the provider is shutting down")

// ReapEvery is how often idle sandboxes are looked for.
const ReapEvery = time.Second

// Holder holds a provider's boxes by id.
type Holder struct {
	log hclog.Logger

	mu     sync.Mutex
	boxes  map[string]Box
	closed bool
	reaper chan struct{} // closed to stop the idle reaper; nil until started
}

// NewHolder returns an empty holder that logs the releases it decides on.
func NewHolder(log hclog.Logger) *Holder {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Holder{log: log, boxes: make(map[string]Box)}
}

// Add holds b under its id and starts the idle reaper; after Close it
// refuses (ErrClosed) and the caller tears b down.
func (h *Holder) Add(b Box) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.boxes[b.Info().ID] = b
	h.startReaper()
	return nil
}

// Get returns the box id.
func (h *Holder) Get(id string) (Box, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.boxes[id]
	return b, ok
}

// Purger is a Box that keeps something beyond its Teardown for the
// workspace's next sandbox (a build cache); Purge removes it, after
// Teardown, on a Release with Purge.
type Purger interface {
	Purge(ctx context.Context) error
}

// PurgeFollower is a Purger told, before its Teardown, that a Purge
// follows, so that the Teardown can leave what it would give up (a
// workspace volume's reservation) to the Purge. Only the Release that
// takes the box out of the Holder tells it: a box the idle reaper took
// first is torn down as for any release, and the Release with Purge
// that came second finds nothing to release.
type PurgeFollower interface {
	Purger
	PurgeFollows()
}

// Release tears the box id down, and with opts.Purge a Purger's kept
// state too; an id it does not hold is plugin.ErrNotProvisioned.
func (h *Holder) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	h.mu.Lock()
	b, ok := h.boxes[id]
	delete(h.boxes, id)
	h.mu.Unlock()
	if !ok {
		return plugin.ErrNotProvisioned
	}
	if f, ok := b.(PurgeFollower); ok && opts.Purge {
		f.PurgeFollows()
	}
	start := time.Now()
	err := b.Teardown(ctx)
	if p, ok := b.(Purger); ok && opts.Purge {
		err = errors.Join(err, p.Purge(ctx))
	}
	h.log.Debug("codegen sandbox released", "id", id, "elapsed", time.Since(start))
	return err
}

// List returns the boxes held, without their tokens; a Mortal box's
// Details say whether it runs (State).
func (h *Holder) List() []plugin.Provisioned {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]plugin.Provisioned, 0, len(h.boxes))
	for _, b := range h.boxes {
		info := withState(b, b.Info())
		info.Token = ""
		out = append(out, info)
	}
	return out
}

// Close tears every box down, concurrently, and refuses new ones: the
// plugin is stopping, and nothing it started may outlive it.
func (h *Holder) Close() error {
	h.mu.Lock()
	h.closed = true
	boxes := h.boxes
	h.boxes = make(map[string]Box)
	if h.reaper != nil {
		close(h.reaper)
		h.reaper = nil
	}
	h.mu.Unlock()
	errs := make([]error, 0, len(boxes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, b := range boxes {
		wg.Go(func() {
			err := b.Teardown(context.Background())
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startReaper starts the idle reaper once; called with mu held.
func (h *Holder) startReaper() {
	if h.reaper != nil {
		return
	}
	stop := make(chan struct{})
	h.reaper = stop
	go func() {
		t := time.NewTicker(ReapEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				h.reapIdle()
			}
		}
	}()
}

// reapIdle releases the boxes nothing has been connected to for their
// idle timeout.
func (h *Holder) reapIdle() {
	h.mu.Lock()
	var idle []string
	for id, b := range h.boxes {
		// A paused sandbox is kept until it is resumed or released: it
		// was paused to be kept.
		if since := b.IdleSince(); !since.IsZero() && time.Since(since) > b.IdleTimeout() && !paused(b) {
			idle = append(idle, id)
		}
	}
	h.mu.Unlock()
	for _, id := range idle {
		if h.sleep(id) {
			continue
		}
		h.log.Info("releasing an idle codegen sandbox", "id", id)
		if err := h.Release(context.Background(), id, plugin.ReleaseOptions{}); err != nil && !errors.Is(err, plugin.ErrNotProvisioned) {
			h.log.Warn("releasing an idle codegen sandbox", "id", id, "error", err)
		}
	}
}

// sleep pauses the idle box id if it sleeps when idle, and reports
// whether it does: such a box is never released as idle.
func (h *Holder) sleep(id string) bool {
	h.mu.Lock()
	b := h.boxes[id]
	h.mu.Unlock()
	s, ok := b.(Sleeper)
	if !ok || !s.SleepsWhenIdle() {
		return false
	}
	if err := s.Sleep(context.Background()); err != nil {
		h.log.Warn("pausing an idle codegen sandbox", "id", id, "error", err)
	} else {
		h.log.Info("paused an idle codegen sandbox; its next call resumes it", "id", id)
	}
	return true
}

// Mortal is a Box whose sandbox can stop by itself (its container
// exited, its pod went): List shows such a box as dead, with why, until
// it is released.
type Mortal interface {
	// Dead says how the sandbox stopped, or "" while it runs.
	Dead() string
}

// State is the key of a listed sandbox's Details saying whether it runs:
// StateRunning, StatePaused, or "dead: " and why. Boxes that are neither
// Mortal nor Pausable have none.
const (
	State        = "state"
	StateRunning = "running"
	StateDead    = "dead: "
)

// withState is info with its State detail set, in a copy of Details.
func withState(b Box, info plugin.Provisioned) plugin.Provisioned {
	m, mortal := b.(Mortal)
	_, pausable := b.(Pausable)
	if !mortal && !pausable {
		return info
	}
	details := make(map[string]string, len(info.Details)+1)
	maps.Copy(details, info.Details)
	details[State] = StateRunning
	if paused(b) {
		details[State] = StatePaused
	}
	if mortal {
		if why := m.Dead(); why != "" {
			details[State] = StateDead + why
		}
	}
	info.Details = details
	return info
}
