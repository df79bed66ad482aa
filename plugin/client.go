package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// maxOutputLimit bounds the per-stream cap a plugin may claim in Open, so
// a plugin cannot talk the host into holding gigabytes.
const maxOutputLimit = 1 << 30

// closeTimeout bounds RemoteSandbox.Close, which has no context.
const closeTimeout = 10 * time.Second

// CallTimeout bounds a unary call to a plugin (Describe, Open, Release,
// List) whose context sets no deadline: a plugin that stopped answering —
// frozen by SIGSTOP, deadlocked — must not hold its host forever.
const CallTimeout = sandbox.DefaultOpenTimeout

// bounded is ctx, with d (CallTimeout for a unary call) as its deadline
// when it has none.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// Client is the host's connection to one plugin process: what dispensing
// PluginKey from go-plugin's ClientProtocol returns. It is safe for
// concurrent use; every sandbox and call shares its one connection.
//
// Its calls fail with sandbox.ContextError when the caller's context ends,
// and with a KindTransport error naming the plugin when the plugin is gone
// or the connection broke; once go-plugin has seen the process exit they
// fail at once.
type Client struct {
	rpc  sandboxpb.SandboxClient
	prov sandboxpb.ProviderClient
	done context.Context // ends when the plugin process has exited

	mu     sync.Mutex
	name   string
	serve  bool     // the plugin serves Calls, said its last Describe
	socket net.Conn // the calls socket, offered at launch, kept if the plugin serves it
	mux    *callMux // the Calls stream, made at the first call on it
}

// newClient wraps conn; done ends when the plugin process is known to be
// gone (go-plugin's context), failing calls in flight at once instead of
// waiting for the connection to notice.
func newClient(done context.Context, conn grpc.ClientConnInterface) *Client {
	if done == nil {
		done = context.Background()
	}
	return &Client{rpc: sandboxpb.NewSandboxClient(conn), prov: sandboxpb.NewProviderClient(conn), done: done}
}

// Description is what a plugin says about itself.
type Description struct {
	Name            string
	Version         string // semantic version, no leading "v"
	ProtocolVersion int
	Modes           []ModeInfo // sorted by name
}

// ModeInfo describes one mode a plugin serves.
type ModeInfo struct {
	Name        string
	ConfigKeys  []string // the keys its configuration accepts, if declared
	Description string   // one line, optional
	// Provider marks a provider mode: Provision hands out MCP endpoints
	// for it; it runs no command.
	Provider bool
}

// PluginName is the name the plugin gave in its last Describe answer,
// empty before the first.
func (c *Client) PluginName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// servesCalls says the plugin serves the Calls stream.
func (c *Client) servesCalls() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serve
}

// calls is the connection's Calls stream.
func (c *Client) calls() *callMux {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mux == nil {
		c.mux = &callMux{rpc: c.rpc}
		if c.socket != nil {
			c.mux.socket = newFrameConn(c.socket)
		}
	}
	return c.mux
}

// label names the plugin in error messages.
func (c *Client) label() string {
	if n := c.PluginName(); n != "" {
		return n
	}
	return "(unnamed)"
}

// Describe asks the plugin what it is and which modes it serves.
func (c *Client) Describe(ctx context.Context) (Description, error) {
	if err := c.exited(); err != nil {
		return Description{}, err
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	resp, err := c.rpc.Describe(ctx, &sandboxpb.DescribeRequest{}, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		return Description{}, c.callError(ctx, "describe", err)
	}
	d := Description{
		Name:            resp.GetName(),
		Version:         resp.GetVersion(),
		ProtocolVersion: int(resp.GetProtocolVersion()),
	}
	for _, m := range resp.GetModes() {
		d.Modes = append(d.Modes, ModeInfo{Name: m.GetName(), ConfigKeys: m.GetConfigKeys(), Description: m.GetDescription(), Provider: m.GetProvider()})
	}
	c.mu.Lock()
	c.name, c.serve = d.Name, resp.GetCalls()
	if c.socket != nil && c.mux == nil && !(c.serve && resp.GetCallsSocket()) {
		// A plugin that predates the socket, or serves no Calls.
		_ = c.socket.Close()
		c.socket = nil
	}
	c.mu.Unlock()
	return d, nil
}

// OfferCallsSocket gives the client the host's end of the calls socket
// passed to the plugin at launch (see CallsSocket). Calls go on it once
// a Describe has said the plugin serves it; the client closes it when
// the plugin does not, when the plugin process is gone, and on
// CloseCallsSocket. Offer it before the first Describe.
func (c *Client) OfferCallsSocket(s *CallsSocket) {
	conn := s.takeHost()
	if conn == nil {
		return
	}
	c.mu.Lock()
	c.socket = conn
	c.mu.Unlock()
	context.AfterFunc(c.done, func() { _ = conn.Close() })
}

// CloseCallsSocket closes the calls socket, ending the calls on it: for
// a host stopping the plugin.
func (c *Client) CloseCallsSocket() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.socket != nil {
		_ = c.socket.Close()
	}
}

// Open opens the sandbox name of the given mode in the plugin. A
// configuration the plugin rejects comes back as a plain error carrying
// the plugin's message verbatim, for the caller to prefix with where the
// configuration was written. Open asks for a Describe first if none was
// made, so errors can name the plugin.
func (c *Client) Open(ctx context.Context, name, mode string, cfg map[string]any) (*RemoteSandbox, error) {
	if err := c.exited(); err != nil {
		return nil, err
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	if c.PluginName() == "" {
		if _, err := c.Describe(ctx); err != nil {
			return nil, err
		}
	}
	var raw []byte
	if len(cfg) > 0 {
		var err error
		if raw, err = json.Marshal(cfg); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	resp, err := c.rpc.Open(ctx, &sandboxpb.OpenRequest{SandboxName: name, Mode: mode, ConfigJson: raw}, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		st := status.Convert(err)
		switch st.Code() {
		case codes.InvalidArgument:
			return nil, errors.New(st.Message())
		case codes.FailedPrecondition:
			// The sandbox could not open; the error keeps its kind.
			for _, d := range st.Details() {
				if res, ok := d.(*sandboxpb.SpawnResult); ok {
					if err := errorOf(res); err != nil {
						return nil, err
					}
				}
			}
			return nil, errors.New(st.Message())
		}
		return nil, c.callError(ctx, "open sandbox "+name, err)
	}
	if resp.GetHandle() == "" {
		return nil, connectionError(c.label(), "open sandbox "+name+": no handle in the answer", nil)
	}
	limit := resp.GetOutputLimit()
	switch {
	case limit <= 0:
		limit = sandbox.DefaultOutputLimit
	case limit > maxOutputLimit:
		limit = maxOutputLimit
	}
	return &RemoteSandbox{client: c, plugin: c.label(), name: name, mode: mode, handle: resp.GetHandle(), limit: int(limit), env: resp.GetEnv()}, nil
}

// exited fails a call at once when the plugin process is known to be
// gone: the connection may not have noticed yet.
func (c *Client) exited() error {
	if c.done.Err() != nil {
		return connectionError(c.label(), "connection lost: plugin process exited", nil)
	}
	return nil
}

// callError classifies a failed unary call: the caller's own context
// first, then a plugin that is gone, then what the plugin said.
func (c *Client) callError(ctx context.Context, what string, err error) error {
	if sandbox.Done(ctx) {
		return sandbox.ContextError(ctx, fmt.Sprintf("plugin %s: %s", c.label(), what), 0)
	}
	if err := c.exited(); err != nil {
		return err
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return connectionError(c.label(), what+": connection lost", statusCause(err))
	}
	return transportError(c.label(), what, errors.New(status.Convert(err).Message()))
}
