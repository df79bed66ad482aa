package main

import (
	"errors"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// hostOptions are the plugin host settings every command shares: the
// --plugin-dir flags, a config's own plugin dirs, its lock file, and a
// reattach list from the environment.
func hostOptions(common *commonFlags, log hclog.Logger, configPath string, configDirs []string) host.Options {
	opts := host.Options{
		Dirs:         common.pluginDirs,
		ConfigDirs:   configDirs,
		Logger:       log,
		StartTimeout: common.startTimeout,
		Metrics:      common.telemetry.metrics,
	}
	if configPath != "" {
		opts.LockPath = lockfile.Path(filepath.Dir(configPath))
	}
	return host.WithEnv(opts)
}

// runtimeOptions resolve built-in modes in-process and every other mode
// through a plugin host made for the config being loaded.
func runtimeOptions(common *commonFlags, log hclog.Logger) hooks.Options {
	return hooks.Options{
		Logger:         log,
		Metrics:        common.telemetry.metrics,
		TracerProvider: common.telemetry.tracer,
		Plugins: func(configPath string, dirs []string) (hooks.Plugins, error) {
			return host.New(hostOptions(common, log, configPath, dirs))
		},
	}
}

// loadRuntime loads a config, or, with none, a runtime holding only the
// built-in direct sandbox (plugins are still found for `spawn`).
func loadRuntime(path string, common *commonFlags, log hclog.Logger) (*hooks.Runtime, error) {
	return loadRuntimeWith(path, runtimeOptions(common, log))
}

func loadRuntimeWith(path string, opts hooks.Options) (*hooks.Runtime, error) {
	if path == "" {
		return hooks.New(&config.File{}, opts)
	}
	return hooks.Load(path, opts)
}

// openRuntime builds the logger from the common flags and loads the
// config (none: the built-in sandboxes only). On failure it has reported
// the problem — a *config.Error lists every one, each with its file, line
// and entry — and code is the exit code: 2 for a config that is wrong,
// 125 when the config is fine but a sandbox could not open (its engine is
// unreachable, its image missing). code is exitOK on success.
func (e *cliEnv) openRuntime(common *commonFlags, cfgPath string) (rt *hooks.Runtime, log hclog.Logger, code int) {
	log, err := common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return nil, nil, exitUsage
	}
	if rt, err = loadRuntime(cfgPath, common, log); err != nil {
		e.errorf("%v", err)
		return nil, nil, openFailureCode(err)
	}
	return rt, log, exitOK
}

// openFailureCode is the exit code for a runtime that did not load:
// exitSandbox when every problem is a sandbox that could not open for a
// reason of its own, exitUsage when anything of the config is wrong.
func openFailureCode(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) && len(ce.Problems) > 0 {
		for _, p := range ce.Problems {
			if p.Err == nil || !sandboxFailure(p.Err) {
				return exitUsage
			}
		}
		return exitSandbox
	}
	if sandboxFailure(err) {
		return exitSandbox
	}
	return exitUsage
}

// sandboxFailure reports an error of a sandbox that could not start or
// reach what it runs on, as opposed to a configuration it rejected.
func sandboxFailure(err error) bool {
	k := sandbox.KindOf(err)
	return k == sandbox.KindStart || k == sandbox.KindTransport || k == sandbox.KindTimeout
}
