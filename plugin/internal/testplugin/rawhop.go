package main

import (
	"fmt"
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/plugin/internal/rawhop"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// rawHopMain serves the direct backend over a bare unix socket instead of
// the plugin protocol, for BenchmarkSpawnRawHop, and exits; with
// answerAtOnce, a backend that answers with its stdin at once (BenchmarkHopRawHop).
func rawHopMain(path string, answerAtOnce bool) {
	var sb sandbox.Sandbox = direct.New("rawhop", shell.Options{})
	if answerAtOnce {
		sb = funcSandbox{name: "rawhop", spawn: noop}
	}
	if err := rawhop.Serve(path, sb); err != nil {
		fmt.Fprintln(os.Stderr, "testplugin raw hop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
