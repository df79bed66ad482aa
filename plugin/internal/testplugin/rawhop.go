package main

import (
	"fmt"
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/plugin/internal/rawhop"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// rawHopMain serves the direct backend over a bare unix socket instead of
// the plugin protocol, for BenchmarkSpawnRawHop, and exits.
func rawHopMain(path string) {
	if err := rawhop.Serve(path, direct.New("rawhop", shell.Options{})); err != nil {
		fmt.Fprintln(os.Stderr, "testplugin raw hop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
