// Command promptkit-sandbox-kubectl is the Kubernetes backend plugin of
// promptkit-sandbox: it serves the kubectl_exec mode (see package
// kubebox) and the kubectl_codegen provider (see package kubecodegen).
// The host starts it; it is not run by hand.
//
// Started with resident.Flag it is instead kubectl_exec's resident, which
// the plugin copies into a container of the pod and runs there (see
// package resident).
package main

import (
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecodegen"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
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
	plugin.Serve(serveOpts(version))
}

// serveOpts is kubectl_exec's options with the codegen provider added.
func serveOpts(v string) plugin.ServeOpts {
	opts := kubebox.ServeOpts(v)
	opts.Providers = map[string]plugin.Provider{kubecodegen.Mode: kubecodegen.NewProvider(opts.Logger.Named(kubecodegen.Mode))}
	opts.ConfigKeys[kubecodegen.Mode] = kubecodegen.Keys
	opts.Descriptions[kubecodegen.Mode] = "provider: sandboxd in a Pod per sandbox, egress denied by a NetworkPolicy, its MCP endpoint on a loopback port"
	return opts
}
