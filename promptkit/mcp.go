package promptkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/AltairaLabs/PromptKit/runtime/hooks"
	"github.com/AltairaLabs/PromptKit/sdk"
)

// Scope is how long a codegen sandbox resolved for PromptKit lives.
type Scope string

const (
	// ScopeConversation gives every conversation a sandbox of its own,
	// released when the conversation closes.
	ScopeConversation Scope = "conversation"
	// ScopeProcess shares one sandbox per server name among every
	// conversation, until the resolver or the adapter closes.
	ScopeProcess Scope = "process"
)

// MCPOptions tune how codegen sandboxes are resolved for PromptKit.
type MCPOptions struct {
	// RuntimeConfig is the RuntimeConfig declaring the sandboxes; empty
	// means those PromptKit loaded through this adapter
	// (sdk.WithRuntimeConfig after Register).
	RuntimeConfig string
	// Sandbox, when set, is the declared sandbox every server name
	// resolves to; by default a server resolves to the sandbox declared
	// under its own name.
	Sandbox string
	// Workspace, Image, Language, IdleTimeout and Timeout are as in
	// CodegenRequest.
	Workspace       string
	Image, Language string
	IdleTimeout     time.Duration
	Timeout         time.Duration
	// Scope is ScopeConversation when empty.
	Scope Scope
}

// Endpoints resolves MCP servers to codegen sandboxes for PromptKit:
// an sdk.MCPEndpointResolver. Every Resolve provisions a sandbox (one
// per name for ScopeProcess) and returns its base URL, which PromptKit's
// default SSE client dials as is, with the bearer token in Headers.
//
// It is also a PromptKit session hook: given to sdk.WithSessionHook as
// well, it releases the sandboxes it resolved for a conversation when
// that conversation closes. The sandboxes resolved since the last
// session start belong to the next conversation that starts, so share
// one Endpoints between conversations opened one at a time, or use
// MCPServer, which binds a conversation's sandboxes exactly. Whatever
// it holds is released by Close, by Adapter.Close, by the provider's
// idle timeout, and with this process.
type Endpoints struct {
	a      *Adapter
	opts   MCPOptions
	parent *Endpoints // MCPServer's, holding what ScopeProcess shares
	// hooked says the session hook is installed with the resolver (by
	// MCPServer): a sandbox whose conversation never starts (its open
	// failed after Resolve) is then released after unboundGrace.
	hooked bool

	mu      sync.Mutex
	unbound []*CodegenSandbox
	convs   map[string][]*CodegenSandbox
	shared  map[string]*CodegenSandbox
	lastErr error
	closed  bool
}

var (
	_ sdk.MCPEndpointResolver = (*Endpoints)(nil)
	_ hooks.SessionHook       = (*Endpoints)(nil)
)

// unboundGrace is how long a sandbox resolved for a conversation may
// wait for it to start: sdk.Open starts it right after resolving, unless
// the open failed.
const unboundGrace = time.Minute

// MCPEndpoints returns a resolver of codegen sandboxes; pass it to
// sdk.WithMCPEndpoints (and sdk.WithSessionHook to release each
// conversation's sandbox when it closes). Close it when done; closing
// the adapter closes it too.
func (a *Adapter) MCPEndpoints(opts MCPOptions) *Endpoints {
	return &Endpoints{a: a, opts: opts}
}

// MCPServer is the one option a PromptKit program adds to sdk.Open to
// give the conversation a codegen sandbox as the MCP server name:
//
//	conv, err := sdk.Open("agent.pack.json", "code",
//	    sdk.WithRuntimeConfig("runtime.yaml"),
//	    a.MCPServer("codegen", promptkit.MCPOptions{}))
//
// It declares the server by name, resolves it to the sandbox the
// RuntimeConfig declares under that name, and releases the sandbox when
// the conversation closes (ScopeConversation) or when the adapter does
// (ScopeProcess). It installs the conversation's MCP endpoint resolver:
// other servers declared by name only then resolve through it too.
func (a *Adapter) MCPServer(name string, opts MCPOptions) sdk.Option {
	return eachOpen(func() []sdk.Option {
		return []sdk.Option{sdk.WithMCPServer(sdk.NewMCPServerByName(name))}
	}, a.MCPResolver(opts))
}

// MCPResolver is MCPServer without the declaration: the option resolves
// the MCP servers declared elsewhere by name only — in the RuntimeConfig's
// spec.mcp_servers, which is where PromptKit lets a server choose
// Streamable HTTP (transport: streamable_http) — to codegen sandboxes,
// one per conversation (ScopeConversation), released when it closes.
func (a *Adapter) MCPResolver(opts MCPOptions) sdk.Option {
	root := &Endpoints{a: a, opts: opts}
	return eachOpen(func() []sdk.Option {
		conv := &Endpoints{a: a, opts: opts, parent: root, hooked: true}
		return []sdk.Option{sdk.WithMCPEndpoints(conv), sdk.WithSessionHook(conv)}
	})
}

// eachOpen makes one sdk.Option of options built anew by every sdk.Open
// that applies it, so that each conversation gets a resolver of its
// own. It is generic because sdk.Option's parameter type is unexported.
func eachOpen[C any, O ~func(C) error](build func() []O, more ...O) O {
	return func(c C) error {
		for _, o := range append(build(), more...) {
			if err := o(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// Resolve provisions the codegen sandbox name resolves to and returns
// its endpoint. When it cannot, it logs why at error level and returns
// the zero endpoint, which PromptKit turns into a failed open; LastError
// (and Adapter.LastCodegenError) returns the reason.
func (e *Endpoints) Resolve(name string) sdk.MCPEndpoint {
	sb, err := e.resolve(name)
	if err != nil {
		e.a.log.Error("cannot resolve MCP server to a codegen sandbox; PromptKit will fail the open with \"no URL\"",
			"server", name, "sandbox", e.sandboxName(name), "error", err)
		e.setErr(&ResolveError{Server: name, Err: err})
		return sdk.MCPEndpoint{}
	}
	return sdk.MCPEndpoint{URL: sb.URL, Headers: sb.Headers}
}

func (e *Endpoints) sandboxName(server string) string {
	if e.opts.Sandbox != "" {
		return e.opts.Sandbox
	}
	return server
}

func (e *Endpoints) resolve(name string) (*CodegenSandbox, error) {
	if e.opts.Scope == ScopeProcess {
		owner := e
		if e.parent != nil {
			owner = e.parent
		}
		return owner.sharedSandbox(name)
	}
	if e.opts.Scope != "" && e.opts.Scope != ScopeConversation {
		return nil, fmt.Errorf("scope %q: want %q or %q", e.opts.Scope, ScopeConversation, ScopeProcess)
	}
	sb, err := e.provision(name)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		_ = sb.Close()
		return nil, errEndpointsClosed
	}
	e.unbound = append(e.unbound, sb)
	e.mu.Unlock()
	if e.hooked {
		time.AfterFunc(unboundGrace, func() { e.releaseUnbound(sb) })
	}
	return sb, nil
}

var errEndpointsClosed = errors.New("the codegen endpoint resolver is closed")

func (e *Endpoints) provision(name string) (*CodegenSandbox, error) {
	o := e.opts
	return e.a.ProvisionCodegen(context.Background(), CodegenRequest{
		Sandbox:       e.sandboxName(name),
		RuntimeConfig: o.RuntimeConfig,
		Workspace:     o.Workspace,
		Image:         o.Image,
		Language:      o.Language,
		IdleTimeout:   o.IdleTimeout,
		Timeout:       o.Timeout,
	})
}

// sharedSandbox is ScopeProcess's sandbox for name, provisioned on the
// first resolve and again when the one held is gone (its plugin exited).
func (e *Endpoints) sharedSandbox(name string) (*CodegenSandbox, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errEndpointsClosed
	}
	if sb := e.shared[name]; sb != nil && e.a.host.Holds(sb.ID) {
		return sb, nil
	}
	// Held under mu: concurrent first opens wait for one sandbox.
	sb, err := e.provision(name)
	if err != nil {
		return nil, err
	}
	if e.shared == nil {
		e.shared = map[string]*CodegenSandbox{}
	}
	e.shared[name] = sb
	return sb, nil
}

// releaseUnbound releases sb if no conversation took it.
func (e *Endpoints) releaseUnbound(sb *CodegenSandbox) {
	e.mu.Lock()
	found := false
	for i, u := range e.unbound {
		if u == sb {
			e.unbound = append(e.unbound[:i], e.unbound[i+1:]...)
			found = true
			break
		}
	}
	e.mu.Unlock()
	if found {
		e.a.log.Warn("releasing a codegen sandbox no conversation started with (its open failed)", "sandbox", sb.Name, "id", sb.ID)
		e.closeLogged(sb)
	}
}

func (e *Endpoints) closeLogged(sb *CodegenSandbox) {
	if err := sb.Close(); err != nil {
		e.a.log.Warn("release codegen sandbox", "sandbox", sb.Name, "id", sb.ID, "error", err)
	}
}

// Name names the session hook.
func (e *Endpoints) Name() string { return "promptkit-sandbox-codegen" }

// OnSessionStart gives the conversation starting the sandboxes resolved
// for it.
func (e *Endpoints) OnSessionStart(_ context.Context, ev hooks.SessionEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.unbound) == 0 {
		return nil
	}
	if e.convs == nil {
		e.convs = map[string][]*CodegenSandbox{}
	}
	e.convs[ev.ConversationID] = append(e.convs[ev.ConversationID], e.unbound...)
	e.unbound = nil
	return nil
}

// OnSessionUpdate does nothing.
func (e *Endpoints) OnSessionUpdate(context.Context, hooks.SessionEvent) error { return nil }

// OnSessionEnd releases the sandboxes of the conversation closing.
func (e *Endpoints) OnSessionEnd(_ context.Context, ev hooks.SessionEvent) error {
	e.mu.Lock()
	sbs := e.convs[ev.ConversationID]
	delete(e.convs, ev.ConversationID)
	e.mu.Unlock()
	if err := closeCodegens(sbs); err != nil {
		e.a.log.Warn("release the codegen sandboxes of a closed conversation", "conversation", ev.ConversationID, "error", err)
	}
	return nil
}

// LastError is why the latest Resolve that failed failed (a
// *ResolveError), nil if none has.
func (e *Endpoints) LastError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastErr
}

func (e *Endpoints) setErr(err error) {
	for o := e; o != nil; o = o.parent {
		o.mu.Lock()
		o.lastErr = err
		o.mu.Unlock()
	}
	e.a.lastCodegenErr.Store(&err)
}

// Close releases every sandbox the resolver holds; later resolves fail.
func (e *Endpoints) Close() error {
	e.mu.Lock()
	e.closed = true
	var sbs []*CodegenSandbox
	sbs = append(sbs, e.unbound...)
	for _, c := range e.convs {
		sbs = append(sbs, c...)
	}
	for _, sb := range e.shared {
		sbs = append(sbs, sb)
	}
	e.unbound, e.convs, e.shared = nil, nil, nil
	e.mu.Unlock()
	return closeCodegens(sbs)
}

// ResolveError is a Resolve that could not give PromptKit an endpoint.
type ResolveError struct {
	Server string // the MCP server's name
	Err    error
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("resolve MCP server %q to a codegen sandbox: %v", e.Server, e.Err)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// LastCodegenError is why the latest resolve of a codegen sandbox for
// PromptKit failed, by any of this adapter's resolvers (a
// *ResolveError); nil if none has. PromptKit reports only "no URL".
func (a *Adapter) LastCodegenError() error {
	if p := a.lastCodegenErr.Load(); p != nil {
		return *p
	}
	return nil
}
