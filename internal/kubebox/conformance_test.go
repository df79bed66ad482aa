package kubebox_test

import (
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
)

// TestConformance runs the contract's suite against kubectl_exec (the
// native transport with and without the resident, and the kubectl CLI),
// in pods of the real cluster (kubecluster), each through the Factory and
// through the plugin binary started by the plugin host. The two ways run
// one after the other: four cells at once, each running its cases side by
// side, on two cores shared with the cluster itself, stalled exec streams
// past an open's thirty seconds (the contract is about one sandbox's
// calls, not the machine's load).
func TestConformance(t *testing.T) {
	t.Parallel()
	kubecluster.Require(t)
	cells := func(open conformanceOpener) []sandboxtest.Cell {
		return []sandboxtest.Cell{
			conformanceCell("kubectl_exec-native-resident", open, map[string]any{"transport": kubebox.TransportNative, "resident": true}),
			conformanceCell("kubectl_exec-native-noresident", open, map[string]any{"transport": kubebox.TransportNative, "resident": false}),
		}
	}
	t.Run("in-process", func(t *testing.T) {
		sandboxtest.Conformance(t, cells(conformanceInProcess)...)
	})
	t.Run("plugin", func(t *testing.T) {
		sandboxtest.Conformance(t, cells(conformancePlugin(t))...)
	})
}

// TestConformanceCLI runs the cli transport's cells one after the other,
// before the package's parallel tests (it is not one of them): each of
// its calls and each kill is a kubectl process, and on two cores shared
// with other cells a timeout's kill took past the plugin host's one
// second (sandbox.Grace), which then answered the timeout itself,
// without the call's output.
func TestConformanceCLI(t *testing.T) {
	kubecluster.Require(t)
	cli := map[string]any{"transport": kubebox.TransportCLI}
	t.Run("in-process", func(t *testing.T) {
		sandboxtest.Conformance(t, conformanceCell("kubectl_exec-cli", conformanceInProcess, cli))
	})
	t.Run("plugin", func(t *testing.T) {
		sandboxtest.Conformance(t, conformanceCell("kubectl_exec-cli", conformancePlugin(t), cli))
	})
}
