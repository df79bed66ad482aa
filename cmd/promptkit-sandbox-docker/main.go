// Command promptkit-sandbox-docker is the Docker backend plugin of
// promptkit-sandbox: it serves the docker_run and docker_exec modes (see
// package dockerbox). The host starts it; it is not run by hand.
//
// Started with resident.Flag it is instead docker_exec's resident, which
// the plugin copies into a container and runs there (see package
// resident); started with tether.Flag, the tether a docker_run container
// runs its command under (see package tether).
package main

import (
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/internal/tether"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0"

func main() {
	supervisor.Init()
	if resident.Invoked(os.Args) {
		os.Exit(resident.Main())
	}
	if tether.Invoked(os.Args) {
		os.Exit(tether.Main(os.Args))
	}
	plugin.Serve(dockerbox.ServeOpts(version))
}
