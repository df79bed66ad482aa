package plugin

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// keepingProvider is a fakeProvider that keeps workspace volumes; with
// ignore it answers as a plugin built before them would: the request's
// volume dropped on the floor.
type keepingProvider struct {
	fakeProvider
	ignore bool
	// refuse answers as serve's provider does when the plugin behind
	// it keeps no volumes.
	refuse bool
}

func (k *keepingProvider) Provision(ctx context.Context, spec ProvisionSpec) (Provisioned, error) {
	if k.refuse && spec.WorkspaceVolume != "" {
		return Provisioned{}, fmt.Errorf("plugin behind: %w", ErrNoWorkspaceVolumes)
	}
	p, err := k.fakeProvider.Provision(ctx, spec)
	if err == nil && !k.ignore {
		p.WorkspaceVolume = spec.WorkspaceVolume
		k.mu.Lock()
		k.held[p.ID] = p
		k.mu.Unlock()
	}
	return p, err
}

func (k *keepingProvider) Volumes(context.Context) ([]WorkspaceVolume, error) {
	return []WorkspaceVolume{{Name: "kept", Mode: "keeping_codegen", Sandbox: "id1", Created: time.Unix(100, 0), Details: map[string]string{"user": "1:1"}}}, nil
}

// TestWorkspaceVolumeThroughThePlugin: a workspace volume is asked for
// and echoed; List carries the volumes, and usage only when asked; a
// provider that keeps none refuses with ErrNoWorkspaceVolumes before
// provisioning anything; a plugin that ignores the field (one built
// before it) gets its sandbox released and the caller the same error.
func TestWorkspaceVolumeThroughThePlugin(t *testing.T) {
	keep := &keepingProvider{fakeProvider: fakeProvider{held: map[string]Provisioned{}}}
	old := &keepingProvider{fakeProvider: fakeProvider{held: map[string]Provisioned{}}, ignore: true}
	plain := &fakeProvider{held: map[string]Provisioned{}}
	relay := &keepingProvider{fakeProvider: fakeProvider{held: map[string]Provisioned{}}, refuse: true}
	client, _ := localClient(t, ServeOpts{
		Name: "prov", Version: "1.0.0",
		Providers: map[string]Provider{"keeping_codegen": keep, "old_codegen": old, "plain_codegen": plain, "relay_codegen": relay},
	})
	ctx := context.Background()
	cfg := map[string]any{"image": "x"}

	p, err := client.Provision(ctx, ProvisionSpec{Name: "a", Mode: "keeping_codegen", Config: cfg, WorkspaceVolume: "kept"}, 0)
	if err != nil || p.WorkspaceVolume != "kept" {
		t.Fatalf("Provision with a volume: %+v, %v", p, err)
	}
	l, err := client.List(ctx, ListOptions{})
	if err != nil || len(l.Sandboxes) != 1 || l.Sandboxes[0].WorkspaceVolume != "kept" {
		t.Errorf("List: %+v, %v", l, err)
	}
	// Two providers see the same volume: it is listed once.
	want := WorkspaceVolume{Name: "kept", Mode: "keeping_codegen", Sandbox: "id1", Created: time.Unix(100, 0), Details: map[string]string{"user": "1:1"}}
	if len(l.Volumes) != 1 || l.Volumes[0].Name != want.Name || l.Volumes[0].Sandbox != want.Sandbox || !l.Volumes[0].Created.Equal(want.Created) || l.Volumes[0].Details["user"] != "1:1" {
		t.Errorf("volumes: %+v, want only %+v", l.Volumes, want)
	}

	if _, err := client.Provision(ctx, ProvisionSpec{Name: "b", Mode: "plain_codegen", Config: cfg, WorkspaceVolume: "v1"}, 0); !errors.Is(err, ErrNoWorkspaceVolumes) {
		t.Errorf("a provider that keeps none: %v, want ErrNoWorkspaceVolumes", err)
	}
	if len(plain.held) != 0 {
		t.Errorf("a provider that keeps none provisioned %v", plain.held)
	}

	// A refusal from further on (serve's provider, through its host)
	// stays typed across this hop.
	if _, err := client.Provision(ctx, ProvisionSpec{Name: "r", Mode: "relay_codegen", Config: cfg, WorkspaceVolume: "v1"}, 0); !errors.Is(err, ErrNoWorkspaceVolumes) {
		t.Errorf("a refusal relayed: %v, want ErrNoWorkspaceVolumes", err)
	}

	_, err = client.Provision(ctx, ProvisionSpec{Name: "c", Mode: "old_codegen", Config: cfg, WorkspaceVolume: "v1"}, 0)
	if !errors.Is(err, ErrNoWorkspaceVolumes) {
		t.Errorf("a plugin that ignores the volume: %v, want ErrNoWorkspaceVolumes", err)
	}
	old.mu.Lock()
	left := len(old.held)
	old.mu.Unlock()
	if left != 0 {
		t.Errorf("the sandbox the old plugin made without the volume is still held: %d", left)
	}
	// Without a volume, the same plugin serves as before.
	if _, err := client.Provision(ctx, ProvisionSpec{Name: "d", Mode: "old_codegen", Config: cfg}, 0); err != nil {
		t.Errorf("without a volume: %v", err)
	}
}

// usageProvider records whether List asked for usage.
type usageProvider struct {
	fakeProvider
	asked []bool
}

func (u *usageProvider) List(ctx context.Context, opts ListOptions) ([]Provisioned, error) {
	u.mu.Lock()
	u.asked = append(u.asked, opts.Usage)
	u.mu.Unlock()
	return u.fakeProvider.List(ctx, opts)
}

// TestListUsageFlag: the usage flag crosses the hop as it was set.
func TestListUsageFlag(t *testing.T) {
	up := &usageProvider{fakeProvider: fakeProvider{held: map[string]Provisioned{}}}
	client, _ := localClient(t, ServeOpts{Name: "prov", Version: "1.0.0", Providers: map[string]Provider{"u_codegen": up}})
	ctx := context.Background()
	for _, usage := range []bool{false, true} {
		if _, err := client.List(ctx, ListOptions{Usage: usage}); err != nil {
			t.Fatal(err)
		}
	}
	if len(up.asked) != 2 || up.asked[0] || !up.asked[1] {
		t.Errorf("usage asked: %v, want [false true]", up.asked)
	}
}
