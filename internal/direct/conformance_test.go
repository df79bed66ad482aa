package direct_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestConformance runs the contract's suite against the direct sandbox
// as the Factory builds it. The plugin-binary cell is in plugin/host.
func TestConformance(t *testing.T) {
	t.Parallel()
	sandboxtest.Conformance(t, sandboxtest.Cell{
		Name: "direct",
		Open: func(t *testing.T, cfg map[string]any) sandbox.Sandbox {
			sb, err := direct.Factory(context.Background(), "conformance", maps.Clone(cfg))
			if err != nil {
				t.Fatalf("Factory: %v", err)
			}
			return sb
		},
		Options: sandboxtest.Options{
			KillTimeout: 500 * time.Millisecond,
			Slack:       3 * time.Second,
			Exempt: map[string]string{
				sandboxtest.CaseClose: "direct.Sandbox holds nothing, so it has no Close",
			},
		},
	})
}
