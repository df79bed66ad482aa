package kubecodegen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// waitPooled waits until p has want sandboxes ready in its pools.
func waitPooled(t testing.TB, p *Provider, want int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for p.pools.Ready() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d sandboxes ready after 3m, want %d", p.pools.Ready(), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWarmPoolOnTheRealCluster: an entry with warm: 1 has a sandbox
// created once its config is checked; a Provision hands it out (start:
// warm) and it answers MCP; the pool refills; Close deletes the pooled
// sandbox's objects and the claimed one's.
func TestWarmPoolOnTheRealCluster(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img := imageOnNode(ctx, t, k)
	ns := k.Namespace(t)
	cfg := map[string]any{"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(t, ns), "memory": "512Mi", "cpus": "250m", "warm": 1}

	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Check("code", cfg); err != nil {
		t.Fatal(err)
	}
	waitPooled(t, p, 1)
	start := time.Now()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("pooled: Provision to the first tools/list answer %v", time.Since(start).Round(time.Millisecond))
	if got.Details["start"] != StartWarm {
		t.Errorf("start = %q, want %q", got.Details["start"], StartWarm)
	}
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "a.txt", "content": "pooled\n"})
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "a.txt"}); !strings.Contains(out, "pooled") {
		t.Errorf("Read: %q", out)
	}
	waitPooled(t, p, 1)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if left := objectsOf(t, k, ns, ""); len(left) > 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestWarmValidates: warm is a count of sandboxes within bounds.
func TestWarmValidates(t *testing.T) {
	for _, v := range []any{-1, MaxWarm + 1, "two"} {
		if _, err := parseConfig(map[string]any{"warm": v}); err == nil || !strings.Contains(err.Error(), "warm") {
			t.Errorf("warm: %v: error %v, want one naming warm", v, err)
		}
	}
	if s, err := parseConfig(map[string]any{"warm": 2}); err != nil || s.warm != 2 {
		t.Errorf("warm: 2 gives %d, %v", s.warm, err)
	}
}

// BenchmarkProvisionPooled is Provision to the first tools/list answer
// on the real cluster, from a pool of one against a cold start in the
// same run. Release and the refill are not timed.
func BenchmarkProvisionPooled(b *testing.B) {
	k := kubecluster.Shared(b)
	ctx := context.Background()
	img := imageOnNode(ctx, b, k)
	ns := k.Namespace(b)
	kubeconfig := k.CodegenKubeconfig(b, ns)
	run := func(b *testing.B, warm int) {
		p := NewProvider(nil)
		b.Cleanup(func() { _ = p.Close() })
		cfg := map[string]any{"image": img.Ref, "kubeconfig": kubeconfig, "memory": "512Mi", "cpus": "250m", "warm": warm}
		if err := p.Check("bench", cfg); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			waitPooled(b, p, warm)
			b.StartTimer()
			got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "bench", Mode: Mode, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			cs := mcptest.Connect(b, got.Endpoint, got.Token)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = cs.Close()
			if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("pooled", func(b *testing.B) { run(b, 1) })
	b.Run("cold", func(b *testing.B) { run(b, 0) })
}
