package hooks

import (
	"sort"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Plugins serves the sandbox modes that are not built in — in practice the
// plugin host, which finds backend executables on disk and runs them. It is
// an interface here so the runtime does not depend on how plugins work.
type Plugins interface {
	// Serves reports whether some plugin serves mode.
	Serves(mode string) bool
	// Modes lists every mode the plugins serve, sorted.
	Modes() []string
	// Open opens the sandbox s declares, honouring its version
	// constraint and plugin pin.
	Open(s config.Sandbox) (sandbox.Sandbox, error)
	// Close stops every plugin process.
	Close() error
}

// PluginsFunc builds the Plugins for one config: configPath is the file
// being loaded (its directory holds the lock file) and dirs are its
// spec.plugins.dirs (absolute; nil when it names none).
type PluginsFunc func(configPath string, dirs []string) (Plugins, error)

// modeSet answers config's mode checks from the built-in registry first,
// then the plugins.
type modeSet struct {
	builtin *sandbox.Registry
	plugins Plugins
}

// Serves reports whether a built-in mode or a plugin serves mode.
func (m modeSet) Serves(mode string) bool {
	return m.builtin.Serves(mode) || m.plugins != nil && m.plugins.Serves(mode)
}

// ModeHint passes on where the plugins were looked for.
func (m modeSet) ModeHint() string {
	if h, ok := m.plugins.(config.ModeHinter); ok {
		return h.ModeHint()
	}
	return ""
}

func (m modeSet) Modes() []string {
	modes := m.builtin.Modes()
	if m.plugins != nil {
		modes = mergeSorted(modes, m.plugins.Modes())
	}
	return modes
}

func mergeSorted(a, b []string) []string {
	seen := make(map[string]bool, len(a)+len(b))
	out := make([]string, 0, len(a)+len(b))
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
