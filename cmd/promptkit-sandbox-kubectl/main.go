// Command promptkit-sandbox-kubectl is the Kubernetes backend plugin of
// promptkit-sandbox: it serves the kubectl_exec mode (see package
// kubebox). The host starts it; it is not run by hand.
package main

import (
	"github.com/altairalabs/promptkit-sandbox/cmd/promptkit-sandbox-kubectl/kubebox"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0"

func main() {
	plugin.Serve(kubebox.ServeOpts(version))
}
