package kubebox

import (
	"strings"

	"github.com/go-logr/logr/funcr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// PluginName is the plugin's name: its binary is
// promptkit-sandbox-kubectl[_vVERSION].
const PluginName = "kubectl"

// ServeOpts describes the plugin to plugin.Serve.
func ServeOpts(v string) plugin.ServeOpts {
	version = v
	log := plugin.DefaultLogger()
	routeKlog(log.Named("client-go"))
	return plugin.ServeOpts{
		Name:         PluginName,
		Version:      v,
		Modes:        map[string]sandbox.Factory{Mode: NewFactory(log)},
		ConfigKeys:   map[string][]string{Mode: Keys},
		Descriptions: map[string]string{Mode: "a command inside a container of an existing pod (Kubernetes exec)"},
		Logger:       log,
	}
}

// routeKlog sends client-go's log lines (klog) to log at debug level:
// they are about streams this plugin closes on purpose ("use of closed
// network connection" after a timeout), not news for the host's log.
func routeKlog(log hclog.Logger) {
	klog.SetLogger(funcr.New(func(prefix, args string) {
		log.Debug(strings.TrimSpace(prefix + " " + args))
	}, funcr.Options{}))
}
