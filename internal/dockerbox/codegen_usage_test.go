package dockerbox

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestCodegenWorkspaceUsage: a List that asks for usage says how much
// disk the workspace's files take, as the agent sees them, and no limit
// (docker_codegen sets none); a paused sandbox, which runs nothing, says
// nothing of it.
func TestCodegenWorkspaceUsage(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode,
		Config: map[string]any{"image": image, "cache": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}) })
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Bash", map[string]any{"command": "head -c 3000000 /dev/urandom > blob && mkdir locked && chmod 000 locked"})
	usage := func() map[string]string {
		t.Helper()
		list, err := p.List(ctx, plugin.ListOptions{Usage: true})
		if err != nil || len(list) != 1 {
			t.Fatalf("List: %v %+v", err, list)
		}
		return list[0].Details
	}
	d := usage()
	ws, err := strconv.ParseFloat(d[provision.UsageWorkspace], 64)
	if err != nil || ws < 3e6 || ws > 4e6 {
		t.Errorf("workspace %q bytes, want the 3 MB blob's (details %v)", d[provision.UsageWorkspace], d)
	}
	if v, ok := d[provision.UsageWorkspaceMax]; ok {
		t.Errorf("a workspace limit of %q, where docker_codegen sets none", v)
	}
	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if v, ok := usage()[provision.UsageWorkspace]; ok {
		t.Errorf("workspace usage %q while paused", v)
	}
	if err := p.Resume(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
}
