package plugin

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// forkingProvider is a fakeProvider that can fork.
type forkingProvider struct{ fakeProvider }

func (f *forkingProvider) Fork(ctx context.Context, id string, count int) ([]Provisioned, error) {
	if count > 2 {
		return nil, fmt.Errorf("count must be at most 2, got %d", count)
	}
	var out []Provisioned
	for range count {
		p, err := f.Provision(ctx, ProvisionSpec{Name: "fork-of-" + id, Config: map[string]any{"image": "x"}})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// TestForkThroughThePlugin: the forks come back with their tokens and
// are the plugin's to release like any; a provider that cannot fork, an
// unknown id and a refused count are told apart.
func TestForkThroughThePlugin(t *testing.T) {
	fp := &forkingProvider{fakeProvider{held: map[string]Provisioned{}}}
	plain := &fakeProvider{held: map[string]Provisioned{}}
	client, _ := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Providers: map[string]Provider{"forking_codegen": fp, "plain_codegen": plain},
	})
	ctx := context.Background()
	src, err := client.Provision(ctx, ProvisionSpec{Name: "a", Mode: "forking_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	forks, err := client.Fork(ctx, src.ID, 2)
	if err != nil || len(forks) != 2 || forks[0].Token == "" || forks[0].ID == src.ID {
		t.Fatalf("Fork: %+v, %v", forks, err)
	}
	for _, f := range forks {
		if err := client.Release(ctx, f.ID, ReleaseOptions{}); err != nil {
			t.Errorf("Release of a fork: %v", err)
		}
	}
	if _, err := client.Fork(ctx, src.ID, 3); err == nil || errors.Is(err, ErrCannotFork) || err.Error() != "count must be at most 2, got 3" {
		t.Errorf("a refused count: %v", err)
	}
	other, err := client.Provision(ctx, ProvisionSpec{Name: "b", Mode: "plain_codegen", Config: map[string]any{"image": "x"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Fork(ctx, other.ID, 1); !errors.Is(err, ErrCannotFork) {
		t.Errorf("Fork of a provider that cannot: %v", err)
	}
	if _, err := client.Fork(ctx, "nosuch", 1); !errors.Is(err, ErrNotProvisioned) {
		t.Errorf("Fork of an unknown id: %v", err)
	}
}
