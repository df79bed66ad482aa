package plugin

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// pausingProvider is a fakeProvider that can pause.
type pausingProvider struct {
	fakeProvider
	mu      sync.Mutex
	paused  map[string]bool
	refused string // the id it refuses to pause
}

// errNotThisOne is a pausing provider's refusal of one sandbox.
type errNotThisOne struct{}

func (errNotThisOne) Error() string        { return "its workspace would not survive" }
func (errNotThisOne) Is(target error) bool { return target == ErrCannotPause }

func (p *pausingProvider) Pause(_ context.Context, id string) error {
	p.mu.Lock()
	refused := id == p.refused
	p.mu.Unlock()
	if refused {
		return errNotThisOne{}
	}
	return p.set(id, true)
}
func (p *pausingProvider) Resume(_ context.Context, id string) error { return p.set(id, false) }

func (p *pausingProvider) isPaused(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused[id]
}

func (p *pausingProvider) set(id string, paused bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = map[string]bool{}
	}
	p.paused[id] = paused
	return nil
}

// TestPauseThroughThePlugin: Pause and Resume reach a provider that can
// pause; one that cannot, and an unknown id, are told apart; a plugin
// without the provider service says it cannot pause.
func TestPauseThroughThePlugin(t *testing.T) {
	pp := &pausingProvider{fakeProvider: fakeProvider{held: map[string]Provisioned{}}}
	plain := &fakeProvider{held: map[string]Provisioned{}}
	client, _ := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Providers: map[string]Provider{"pausing_codegen": pp, "plain_codegen": plain},
	})
	ctx := context.Background()
	p, err := client.Provision(ctx, ProvisionSpec{Name: "a", Mode: "pausing_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Pause(ctx, p.ID); err != nil || !pp.isPaused(p.ID) {
		t.Fatalf("Pause: %v (paused: %v)", err, pp.isPaused(p.ID))
	}
	if err := client.Resume(ctx, p.ID); err != nil || pp.isPaused(p.ID) {
		t.Fatalf("Resume: %v (paused: %v)", err, pp.isPaused(p.ID))
	}
	q, err := client.Provision(ctx, ProvisionSpec{Name: "b", Mode: "plain_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Pause(ctx, q.ID); !errors.Is(err, ErrCannotPause) {
		t.Errorf("Pause of a provider that cannot: %v", err)
	}
	// A provider that pauses others refuses this one, and says why.
	r, err := client.Provision(ctx, ProvisionSpec{Name: "c", Mode: "pausing_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pp.mu.Lock()
	pp.refused = r.ID
	pp.mu.Unlock()
	if err := client.Pause(ctx, r.ID); !errors.Is(err, ErrCannotPause) || !strings.Contains(err.Error(), "its workspace would not survive") {
		t.Errorf("Pause refused by the provider: %v, want ErrCannotPause with its reason", err)
	}
	if err := client.Pause(ctx, "nosuch"); !errors.Is(err, ErrNotProvisioned) {
		t.Errorf("Pause of an unknown id: %v", err)
	}

	old := startServer(t, testModes())
	if err := old.client.Resume(ctx, "x"); !errors.Is(err, ErrCannotPause) || errors.Is(err, sandbox.ErrTimeout) {
		t.Errorf("Resume on a plugin without providers: %v", err)
	}
}
