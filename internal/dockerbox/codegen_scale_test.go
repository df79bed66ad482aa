package dockerbox

import (
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/provisionbench"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// BenchmarkCodegenTwentyAtOnce provisions twenty sandboxes of the real
// image at once, cold (issue 33), and reports the spread of Provision to
// first MCP answer and what each holds in memory once idle, as the
// engine accounts it (see provisionbench.AtOnce).
//
//	go test -run '^$' -bench CodegenTwentyAtOnce -benchtime 1x -count 5 ./internal/dockerbox/
func BenchmarkCodegenTwentyAtOnce(b *testing.B) {
	image := realImage(b)
	p, _ := newTestProvider(b)
	provisionbench.AtOnce(b, p, 20, func(int) plugin.ProvisionSpec {
		return plugin.ProvisionSpec{Name: uniqueName(b), Mode: CodegenMode, Config: map[string]any{"image": image}}
	})
}
