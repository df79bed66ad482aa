package kubecodegen

import (
	"context"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/provisionbench"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// BenchmarkProvisionTenAtOnce provisions ten sandboxes of the real image
// at once on the test cluster, cold (issue 33), and reports the spread
// of Provision to first MCP answer and what each holds in memory once
// idle, as its cgroup says (see provisionbench.AtOnce).
//
//	go test -run '^$' -bench ProvisionTenAtOnce -benchtime 1x -count 5 ./internal/kubecodegen/
func BenchmarkProvisionTenAtOnce(b *testing.B) {
	k := kubecluster.Shared(b)
	ctx := context.Background()
	img := imageOnNode(ctx, b, k)
	ns := k.Namespace(b)
	p := NewProvider(nil)
	b.Cleanup(func() { _ = p.Close() })
	// Limits are the Pods' requests too: ten at 100m fit the test
	// cluster's two cores beside its own.
	cfg := map[string]any{"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(b, ns), "memory": "512Mi", "cpus": "100m"}
	if err := p.Check("bench", cfg); err != nil {
		b.Fatal(err)
	}
	provisionbench.AtOnce(b, p, 10, func(int) plugin.ProvisionSpec {
		return plugin.ProvisionSpec{Name: "bench", Mode: Mode, Config: cfg}
	})
}
