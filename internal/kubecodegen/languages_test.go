package kubecodegen

import (
	"context"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/langfixture"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestLanguagesOnTheRealCluster: the Go and the Python image, imported
// into the node, come up by the language key alone, and every tool of
// the language works in the pod over MCP on the language's fixture
// project (run_tests, run_lint, run_typecheck, diagnostics after an
// edit, search_code, snapshots, and the language server's tools).
func TestLanguagesOnTheRealCluster(t *testing.T) {
	k := kubecluster.Shared(t)
	for _, lang := range []string{codegenimage.Go, codegenimage.Python} {
		t.Run(lang, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			img := imageOnNode(ctx, t, k, lang)
			ns := k.Namespace(t)
			kubeconfig := k.CodegenKubeconfig(t, ns)
			p := NewProvider(nil)
			t.Cleanup(func() { _ = p.Close() })
			got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{
				"language": lang, "kubeconfig": kubeconfig, "memory": "1Gi", "cpus": "1",
			}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Details["image"] != img.Ref || got.Details["image_by"] != "language" || got.Details["languages"] != lang {
				t.Errorf("details image %q, image_by %q, languages %q; want %s, language, %s",
					got.Details["image"], got.Details["image_by"], got.Details["languages"], img.Ref, lang)
			}
			fx, _ := langfixture.Get(lang)
			cs := mcptest.Connect(t, got.Endpoint, got.Token)
			fx.WriteThrough(t, cs)
			fx.CheckTools(t, cs)
			if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
				t.Error(err)
			}
			if left := objectsOf(t, k, ns, ""); len(left) > 0 {
				t.Errorf("left after Release: %v", left)
			}
		})
	}
}
