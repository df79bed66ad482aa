package plugin

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// pausingProvider is a fakeProvider that can pause.
type pausingProvider struct {
	fakeProvider
	mu     sync.Mutex
	paused map[string]bool
}

func (p *pausingProvider) Pause(_ context.Context, id string) error  { return p.set(id, true) }
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
	if err := client.Pause(ctx, "nosuch"); !errors.Is(err, ErrNotProvisioned) {
		t.Errorf("Pause of an unknown id: %v", err)
	}

	old := startServer(t, testModes())
	if err := old.client.Resume(ctx, "x"); !errors.Is(err, ErrCannotPause) || errors.Is(err, sandbox.ErrTimeout) {
		t.Errorf("Resume on a plugin without providers: %v", err)
	}
}
