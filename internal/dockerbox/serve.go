package dockerbox

import (
	"context"
	"os"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// staleTimeout bounds the stale-container cleanup at plugin start.
const staleTimeout = 30 * time.Second

// ServeOpts describes the plugin to plugin.Serve, and starts the removal
// of containers, codegen directories and per-sandbox cache volumes left
// behind by dead plugin processes in the background (it logs what it
// removed).
func ServeOpts(version string) plugin.ServeOpts {
	log := plugin.DefaultLogger()
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
			vols, err := RemoveStaleCacheVolumes(ctx)
			if len(vols) > 0 {
				log.Info("removed cache volumes left by dead plugin processes", "count", len(vols), "volumes", vols)
			}
			if err != nil {
				log.Warn("stale cache volume cleanup", "error", err)
			}
			dirs, err := removeStaleDirs(codegenRoot(), processExists)
			if len(dirs) > 0 {
				log.Info("removed codegen directories left by dead plugin processes", "count", len(dirs), "dirs", dirs)
			}
			if err != nil {
				log.Warn("stale codegen directory cleanup", "error", err)
			}
		}()
	}
	return plugin.ServeOpts{
		Name:    PluginName,
		Version: version,
		Modes: map[string]sandbox.Factory{
			RunMode:  RunFactory,
			ExecMode: NewExecFactory(log),
		},
		Providers:  map[string]plugin.Provider{CodegenMode: NewCodegenProvider(DefaultHardening, log)},
		ConfigKeys: map[string][]string{RunMode: RunKeys, ExecMode: ExecKeys, CodegenMode: CodegenKeys},
		Descriptions: map[string]string{
			RunMode:     "a fresh container per call, from a local image (Docker Engine API)",
			ExecMode:    "a command inside an already-running container (Docker Engine API)",
			CodegenMode: "provider: a sandboxd container per sandbox, no network, its MCP endpoint on a loopback port",
		},
		Logger: log,
	}
}
