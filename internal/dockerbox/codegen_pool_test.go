package dockerbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// waitPooled waits until p has want sandboxes ready in its pools.
func waitPooled(t testing.TB, p *CodegenProvider, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p.pools.Ready() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d sandboxes ready after 2m, want %d", p.pools.Ready(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func pooledConfig(image string, warm int) map[string]any {
	return map[string]any{"image": image, "warm": warm, "cache": "none", "memory": "512m"}
}

// TestCodegenWarmPool: an entry with warm: 2 has two sandboxes started
// once its config is checked; a Provision hands one out at once (start:
// warm), answering MCP on a workspace of its own; the pool refills in the
// background; a Provision with a host workspace starts cold and says
// why; Close drains the pool and leaves no container.
func TestCodegenWarmPool(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	cfg := pooledConfig(image, 2)
	if err := p.Check(name, cfg); err != nil {
		t.Fatal(err)
	}
	waitPooled(t, p, 2)
	if n := len(containersNamed(t, name)); n != 2 {
		t.Fatalf("%d containers for a pool of 2", n)
	}

	ctx := context.Background()
	start := time.Now()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "a.txt", "content": "pooled\n"})
	t.Logf("pooled: Provision to first tool answer %v", time.Since(start).Round(time.Millisecond))
	if got.Details["start"] != StartWarm {
		t.Errorf("start = %q, want %q", got.Details["start"], StartWarm)
	}
	if time.Since(got.Created) > time.Minute || got.Created.Before(start) {
		t.Errorf("Created = %v: not the claim's time (%v)", got.Created, start)
	}
	if b, err := os.ReadFile(filepath.Join(got.Workspace, "a.txt")); err != nil || string(b) != "pooled\n" {
		t.Errorf("workspace %s holds %q (%v)", got.Workspace, b, err)
	}
	waitPooled(t, p, 2) // refilled behind the claim

	ws := ownedWorkspace(t, 1234, 1234)
	cold, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: cfg, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if s := cold.Details["start"]; !strings.HasPrefix(s, StartCold+": a host workspace") {
		t.Errorf("start with a host workspace = %q, want cold and why", s)
	}
	for _, id := range []string{got.ID, cold.ID} {
		if err := p.Release(ctx, id, plugin.ReleaseOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoContainers(t, name)
	if p.pools.Ready() != 0 {
		t.Errorf("%d pooled sandboxes after Close", p.pools.Ready())
	}
}

// TestCodegenPoolUnderConcurrentClaims: ten Provisions at once against
// a pool of two: each gets a sandbox of its own (two warm, the rest cold
// and saying so), every one answers; the pool is full again afterwards;
// and nothing is left after Close.
func TestCodegenPoolUnderConcurrentClaims(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	cfg := pooledConfig(image, 2)
	if err := p.Check(name, cfg); err != nil {
		t.Fatal(err)
	}
	waitPooled(t, p, 2)

	const n = 10
	got := make([]plugin.Provisioned, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], errs[i] = p.Provision(context.Background(), plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: cfg})
		})
	}
	wg.Wait()
	warm, ids, workspaces := 0, map[string]bool{}, map[string]bool{}
	for i, g := range got {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		switch s := g.Details["start"]; {
		case s == StartWarm:
			warm++
		case !strings.HasPrefix(s, StartCold+": the pool had no sandbox ready"):
			t.Errorf("claim %d: start = %q", i, s)
		}
		ids[g.ID], workspaces[g.Workspace] = true, true
		if entries, err := os.ReadDir(g.Workspace); err != nil || len(entries) != 0 {
			t.Errorf("claim %d: workspace %s holds %d entries (%v), want none", i, g.Workspace, len(entries), err)
		}
		cs := mcptest.Connect(t, g.Endpoint, g.Token)
		mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "mine.txt", "content": g.ID})
		if b, err := os.ReadFile(filepath.Join(g.Workspace, "mine.txt")); err != nil || string(b) != g.ID {
			t.Errorf("claim %d: its file holds %q (%v)", i, b, err)
		}
	}
	if warm < 2 || len(ids) != n || len(workspaces) != n {
		t.Errorf("%d warm (want at least 2), %d sandboxes, %d workspaces, want %d each", warm, len(ids), len(workspaces), n)
	}
	waitPooled(t, p, 2)
	for _, g := range got {
		if err := p.Release(context.Background(), g.ID, plugin.ReleaseOptions{}); err != nil {
			t.Error(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoContainers(t, name)
}

// TestCodegenWarmValidates: warm is a count of sandboxes within bounds.
func TestCodegenWarmValidates(t *testing.T) {
	for _, v := range []any{-1, MaxCodegenWarm + 1, "two"} {
		if _, err := parseCodegenConfig(map[string]any{"warm": v}, DefaultHardening); err == nil || !strings.Contains(err.Error(), "warm") {
			t.Errorf("warm: %v: error %v, want one naming warm", v, err)
		}
	}
	if s, err := parseCodegenConfig(map[string]any{"warm": 3}, DefaultHardening); err != nil || s.warm != 3 {
		t.Errorf("warm: 3 gives %d, %v", s.warm, err)
	}
}

// BenchmarkCodegenPooled is Provision to the first tool answer (tools/
// list through a fresh MCP client), from a pool of one against a cold
// start in the same run. Release and the refill are not timed.
func BenchmarkCodegenPooled(b *testing.B) {
	image := realImage(b)
	run := func(b *testing.B, warm int) {
		p, _ := newTestProvider(b)
		cfg := pooledConfig(image, warm)
		if err := p.Check("bench-pool", cfg); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			waitPooled(b, p, warm)
			b.StartTimer()
			got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: "bench-pool", Mode: CodegenMode, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			cs := mcptest.Connect(b, got.Endpoint, got.Token)
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = cs.Close()
			if err := p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("pooled", func(b *testing.B) { run(b, 1) })
	b.Run("cold", func(b *testing.B) { run(b, 0) })
}
