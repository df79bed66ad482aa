// Command promptkit-sandbox-docker is the Docker backend plugin of
// promptkit-sandbox: it serves the docker_run and docker_exec modes (see
// package dockerbox). The host starts it; it is not run by hand.
package main

import (
	"github.com/altairalabs/promptkit-sandbox/cmd/promptkit-sandbox-docker/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0"

func main() {
	plugin.Serve(dockerbox.ServeOpts(version))
}
