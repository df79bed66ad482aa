package host

import (
	"os"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// EnvPluginCache names the describe cache's directory, or "off" to start
// every plugin on the path to ask what it serves.
const EnvPluginCache = "PROMPTKIT_PLUGIN_CACHE"

// WithEnv returns opts with what the environment says of the host
// filled in where opts leaves it unset: plugins to reattach to
// (plugin.EnvReattach) and the describe cache (EnvPluginCache). Every
// program that hosts plugins reads the same variables through it.
func WithEnv(opts Options) Options {
	if opts.Reattach == "" {
		opts.Reattach = os.Getenv(plugin.EnvReattach)
	}
	if opts.CacheDir == "" && !opts.NoCache {
		switch cache := os.Getenv(EnvPluginCache); cache {
		case "off":
			opts.NoCache = true
		default:
			opts.CacheDir = cache
		}
	}
	return opts
}
