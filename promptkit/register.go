package promptkit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
)

// Modes lists the modes Register registers, sorted: every sandbox mode
// the discovered plugins serve, and direct when ReplaceDirect is set.
// Provider modes (docker_codegen) hand out MCP endpoints, not hook
// sandboxes, and are left out. Asking starts each plugin the describe
// cache does not know yet.
func (a *Adapter) Modes() []string {
	var modes []string
	for _, m := range a.host.Modes() {
		if !a.host.Provides(context.Background(), m, "", "") {
			modes = append(modes, m)
		}
	}
	if a.opts.ReplaceDirect && !slices.Contains(modes, direct.ModeName) {
		modes = append(modes, direct.ModeName)
		slices.Sort(modes)
	}
	return modes
}

// Factory returns the PromptKit factory of one mode. Each call of it
// returns a handle on the sandbox the entry declares, shared with every
// other load of the same entry (see the package comment).
func (a *Adapter) Factory(mode string) pksandbox.Factory {
	return func(name string, cfg map[string]any) (pksandbox.Sandbox, error) {
		e, err := a.acquire(name, mode, cfg)
		if err != nil {
			return nil, err
		}
		return &handle{a: a, e: e, name: name}, nil
	}
}

// ModeTakenError is returned by Register for a mode that something other
// than this adapter registered in the registry: another live adapter, or
// another backend (PromptKit's example docker sandboxes register
// docker_run, docker_exec and kubectl_exec). Register does not replace
// it; call r.Replace(mode, a.Factory(mode)) to do so on purpose.
type ModeTakenError struct {
	Mode string
	By   string // "another promptkit-sandbox adapter" or "another backend"
}

func (e *ModeTakenError) Error() string {
	return fmt.Sprintf("register sandbox mode %q with PromptKit: already registered by %s", e.Mode, e.By)
}

// NoModesError is returned by Register when no plugin was found to serve
// any mode: PromptKit would otherwise fail later, at load, with a bare
// "no factory registered".
type NoModesError struct {
	Dirs []string // the directories searched
}

func (e *NoModesError) Error() string {
	return "register with PromptKit: no promptkit-sandbox plugin found (searched " + strings.Join(e.Dirs, ", ") +
		"); install one, or point Options.PluginDirs or PROMPTKIT_PLUGIN_PATH at it"
}

// owners records which adapter registered which mode in which registry,
// so that Register can be idempotent for the same adapter and refuse to
// take a mode from another.
var owners = struct {
	sync.Mutex
	m map[*pksandbox.Registry]map[string]*Adapter
}{m: map[*pksandbox.Registry]map[string]*Adapter{}}

// Register adds a factory for every mode in Modes and ProviderModes to
// r, or to PromptKit's process-wide registry (the one sdk.Open and
// hooks.ResolveSandboxes use) when r is nil. A provider mode's factory
// records the sandboxes PromptKit loads under it, for MCPServer and
// ProvisionCodegen to provision by name. It is idempotent: modes this adapter registered
// before are left alone, so calling it before every sdk.Open is safe.
// A mode another adapter or backend holds is a *ModeTakenError, except
// direct with ReplaceDirect, which replaces PromptKit's own, and a mode
// held by an adapter that has been closed, which is taken over.
func (a *Adapter) Register(r *pksandbox.Registry) error {
	if a.isClosed() {
		return ErrClosed
	}
	if r == nil {
		r = pksandbox.GlobalRegistry()
	}
	modes := a.Modes()
	providers := a.ProviderModes()
	if len(modes)+len(providers) == 0 {
		return &NoModesError{Dirs: a.host.Dirs()}
	}
	owners.Lock()
	defer owners.Unlock()
	held := owners.m[r]
	if held == nil {
		held = map[string]*Adapter{}
		owners.m[r] = held
	}
	factories := make(map[string]pksandbox.Factory, len(modes)+len(providers))
	for _, mode := range modes {
		factories[mode] = a.Factory(mode)
	}
	for _, mode := range providers {
		factories[mode] = a.declarationFactory(mode)
	}
	for _, mode := range slices.Sorted(maps.Keys(factories)) {
		owner := held[mode]
		if owner == a {
			continue
		}
		f := factories[mode]
		var err error
		switch {
		case owner != nil && !owner.isClosed():
			return &ModeTakenError{Mode: mode, By: "another promptkit-sandbox adapter"}
		case owner != nil, mode == direct.ModeName:
			err = r.Replace(mode, f)
		default:
			if _, lookupErr := r.Lookup(mode); lookupErr == nil {
				return &ModeTakenError{Mode: mode, By: "another backend"}
			}
			err = r.Register(mode, f)
		}
		if err != nil {
			return fmt.Errorf("register sandbox mode %q with PromptKit: %w", mode, err)
		}
		held[mode] = a
	}
	return nil
}
