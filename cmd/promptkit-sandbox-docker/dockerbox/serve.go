package dockerbox

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// logger is the plugin's logger once ServeOpts has made it; in tests,
// which build sandboxes directly, it discards.
var logger = hclog.NewNullLogger()

// staleTimeout bounds the stale-container cleanup at plugin start.
const staleTimeout = 30 * time.Second

// ServeOpts describes the plugin to plugin.Serve, and starts the removal
// of containers left behind by dead plugin processes in the background
// (it logs what it removed).
func ServeOpts(version string) plugin.ServeOpts {
	log := hclog.New(&hclog.LoggerOptions{
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      logLevel(os.Getenv(plugin.EnvLogLevel)),
	})
	logger = log
	if os.Getenv(plugin.Handshake.MagicCookieKey) == plugin.Handshake.MagicCookieValue || os.Getenv(plugin.EnvDebug) != "" {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), staleTimeout)
			defer cancel()
			removed, err := RemoveStale(ctx)
			if len(removed) > 0 {
				log.Info("removed containers left by dead plugin processes", "count", len(removed), "ids", removed)
			}
			if err != nil {
				log.Warn("stale container cleanup", "error", err)
			}
		}()
	}
	return plugin.ServeOpts{
		Name:    PluginName,
		Version: version,
		Modes: map[string]sandbox.Factory{
			RunMode:  RunFactory,
			ExecMode: ExecFactory,
		},
		ConfigKeys: map[string][]string{RunMode: RunKeys, ExecMode: ExecKeys},
		Descriptions: map[string]string{
			RunMode:  "a fresh container per call, from a local image (Docker Engine API)",
			ExecMode: "a command inside an already-running container (Docker Engine API)",
		},
		Logger: log,
	}
}

func logLevel(v string) hclog.Level {
	if l := hclog.LevelFromString(v); l != hclog.NoLevel {
		return l
	}
	return hclog.Info
}
