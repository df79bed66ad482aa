package kubecodegen

import (
	"context"
	"errors"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestWorkspaceVolumeRefused: kubectl_codegen keeps no workspace
// volumes, so it is no plugin.VolumeKeeper (its plugin server refuses
// the request before it), and a caller in the same process gets the
// same typed refusal, before anything is asked of the cluster.
func TestWorkspaceVolumeRefused(t *testing.T) {
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	if _, ok := any(p).(plugin.VolumeKeeper); ok {
		t.Fatal("kubectl_codegen claims to keep workspace volumes")
	}
	_, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{"image": "img:1"}, WorkspaceVolume: "kept"})
	if !errors.Is(err, plugin.ErrNoWorkspaceVolumes) {
		t.Errorf("Provision with a workspace volume: %v, want ErrNoWorkspaceVolumes", err)
	}
}
