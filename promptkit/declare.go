package promptkit

import (
	"context"
	"fmt"
	"maps"
	"slices"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// ProviderModes lists the provider modes the discovered plugins serve,
// sorted: modes that hand out codegen sandboxes (MCP endpoints), not
// hook sandboxes. Register registers them too, so that PromptKit loads a
// RuntimeConfig declaring one; a hook cannot run in them.
func (a *Adapter) ProviderModes() []string {
	var modes []string
	for _, m := range a.host.Modes() {
		if a.host.Provides(context.Background(), m, "", "") {
			modes = append(modes, m)
		}
	}
	return modes
}

// declarationFactory is the PromptKit factory of a provider mode.
// PromptKit builds every sandbox a RuntimeConfig declares when it loads
// it (sdk.WithRuntimeConfig); for a provider mode that only records the
// entry, resolved as a hook sandbox's is, so that a codegen sandbox can
// later be provisioned by name (ProvisionCodegen, MCPServer). Nothing
// starts until then.
func (a *Adapter) declarationFactory(mode string) pksandbox.Factory {
	return func(name string, cfg map[string]any) (pksandbox.Sandbox, error) {
		if a.isClosed() {
			return nil, ErrClosed
		}
		s, err := config.SandboxFromEntry(name, mode, cfg, config.EntryOptions{Dir: a.baseDir, LookupEnv: a.opts.LookupEnv})
		if err != nil {
			return nil, err
		}
		// For a provider mode the plugin's open checks the entry as the
		// provider will read it, and provisions nothing.
		checked, err := a.host.Open(s)
		if err != nil {
			return nil, err
		}
		_ = sandbox.Close(checked)
		a.mu.Lock()
		if a.decls == nil {
			a.decls = map[string]config.Sandbox{}
		}
		a.decls[name] = s
		a.mu.Unlock()
		return providerHandle{name: name, mode: mode}, nil
	}
}

func (a *Adapter) declared(name string) (config.Sandbox, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.decls[name]
	return s, ok
}

func (a *Adapter) declaredNames() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.decls))
}

// providerHandle is what PromptKit holds for a provider-mode sandbox: a
// hook bound to it fails with a message saying what the mode is for.
type providerHandle struct{ name, mode string }

func (p providerHandle) Name() string { return p.name }

func (p providerHandle) Spawn(context.Context, pksandbox.Request) (pksandbox.Response, error) {
	err := sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
		"sandbox %s: mode %s hands out codegen sandboxes (MCP endpoints) and runs no hook; "+
			"reach it as an MCP server (promptkit.Adapter.MCPServer), or run the hook in a sandbox mode such as docker_run", p.name, p.mode), nil)
	return pksandbox.Response{Err: err}, err
}
