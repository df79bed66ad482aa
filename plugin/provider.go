package plugin

import (
	"context"
	"errors"
	"time"
)

// Provider serves one provider mode: instead of running commands it hands
// out codegen sandboxes, each an MCP server reachable at a loopback
// endpoint with a bearer token of its own (the Provider service of
// shared/proto). A plugin registers its providers in ServeOpts.Providers.
//
// What a provider provisions belongs to the plugin process: a provider
// that implements io.Closer-style Close() error is closed when the plugin
// stops, and must release everything it still holds then.
type Provider interface {
	// Check validates a sandbox's configuration as a Factory would,
	// without provisioning anything. The host opens every sandbox of a
	// config it loads; for a provider mode, Open runs Check only.
	Check(name string, cfg map[string]any) error
	// Provision starts a sandbox and returns once its endpoint answers.
	// Errors keep their sandbox.Kind (KindStart: what it needs is
	// missing; KindTransport: what it runs on is unreachable); an error
	// of no kind is the configuration's fault.
	Provision(ctx context.Context, spec ProvisionSpec) (Provisioned, error)
	// Release stops the sandbox id and removes what was made for it; an
	// id it does not hold is ErrNotProvisioned. opts.Purge also removes
	// what the provider keeps for the workspace's next sandbox.
	Release(ctx context.Context, id string, opts ReleaseOptions) error
	// List returns the sandboxes provisioned and not yet released;
	// opts.Usage asks for what each uses now in its details. With an
	// error, what it returns is what it could list.
	List(ctx context.Context, opts ListOptions) ([]Provisioned, error)
}

// ListOptions qualify a List.
type ListOptions struct {
	// Usage asks for what each sandbox uses now (memory, processes, CPU
	// time), which costs a question to the engine per sandbox: only a
	// listing for people asks for it, not a watcher polling for a dead
	// sandbox.
	Usage bool
}

// ReleaseOptions qualify a Release.
type ReleaseOptions struct {
	// Purge also removes what a provider keeps beyond the sandbox's life
	// so that the workspace's next sandbox starts warm (docker_codegen's
	// build cache volume of `cache: workspace`, and the sandbox's
	// workspace volume). A provider that keeps nothing ignores it.
	Purge bool
}

// ProvisionSpec is what a provider is asked for.
type ProvisionSpec struct {
	// Name is the name the sandbox is declared under.
	Name string
	Mode string
	// Config is the mode's configuration, as a Factory receives it.
	Config map[string]any
	// Workspace, when not empty, replaces the configuration's workspace:
	// an absolute host path.
	Workspace string
	// WorkspaceVolume, when not empty, names a workspace volume kept
	// past the sandbox's release, created on first use, mounted as the
	// workspace (see VolumeKeeper); it excludes Workspace.
	WorkspaceVolume string
}

// Provisioned is a sandbox a provider handed out.
type Provisioned struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Endpoint is the MCP Streamable HTTP URL ("http://127.0.0.1:PORT/mcp").
	Endpoint string `json:"endpoint"`
	// Token is the bearer token the endpoint requires; List leaves it out.
	Token     string            `json:"token,omitempty"`
	Workspace string            `json:"workspace"`
	Created   time.Time         `json:"created"`
	Details   map[string]string `json:"details,omitempty"`
	// WorkspaceVolume is the workspace volume mounted as its workspace
	// (ProvisionSpec.WorkspaceVolume); Workspace is then empty.
	WorkspaceVolume string `json:"workspace_volume,omitempty"`
}

// ErrNotProvisioned is a Release of an id the provider does not hold:
// released already, or provisioned by another plugin process.
var ErrNotProvisioned = errors.New("no such provisioned sandbox")

// DefaultProvisionTimeout bounds a Provision that sets no timeout: a
// container start and sandboxd's first answer, on a loaded engine.
const DefaultProvisionTimeout = 2 * time.Minute
