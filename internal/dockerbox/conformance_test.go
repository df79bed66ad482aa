package dockerbox_test

import (
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
)

// TestConformance runs the contract's suite against docker_run (API and
// CLI transports, and the warm pool) and docker_exec (API with and
// without the resident, and CLI), each through the Factory and through
// the plugin binary started by the plugin host.
func TestConformance(t *testing.T) {
	t.Parallel()
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Busybox)
	cells := func(open conformanceOpener) []sandboxtest.Cell {
		return []sandboxtest.Cell{
			conformanceRunCell("docker_run-api", image, open, map[string]any{"transport": "api"}),
			conformanceRunCell("docker_run-cli", image, open, map[string]any{"transport": "cli"}),
			conformanceRunCell("docker_run-api-pool", image, open, map[string]any{"transport": "api", "pool": 2},
				sandboxtest.CaseConcurrent, "known gap (issue 15): a container create is bounded by a fixed 10 s, not the "+
					"call's deadline, and 32 calls at once on a loaded engine miss it (reported as unreachable); through the "+
					"plugin the same load has cut the plugin's connection"),
			conformanceExecCell("docker_exec-api-resident", image, open, map[string]any{"transport": "api", "resident": true}),
			conformanceExecCell("docker_exec-api-noresident", image, open, map[string]any{"transport": "api", "resident": false}),
			conformanceExecCell("docker_exec-cli", image, open, map[string]any{"transport": "cli"}),
		}
	}
	t.Run("in-process", func(t *testing.T) {
		t.Parallel()
		sandboxtest.Conformance(t, cells(conformanceInProcess)...)
	})
	t.Run("plugin", func(t *testing.T) {
		t.Parallel()
		sandboxtest.Conformance(t, cells(conformancePlugin(t))...)
	})
}
