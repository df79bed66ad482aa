package arena

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// Name is the name the register package registers the source under, the
// value of an MCP server entry's source key.
const Name = "promptkit-sandbox"

// Source is the MCPSource. Each Open provisions one codegen sandbox
// through a promptkit.Adapter; the adapters (one per plugin directory
// asked for) are made on first use and shared by every Open, so one
// plugin process serves all the sandboxes of a run. It is safe for
// concurrent use: arena opens the sessions of concurrent runs at once.
type Source struct {
	opts promptkit.Options
	// provision is the adapter's provisioning; the unit tests replace it.
	provision func(ctx context.Context, a Args) (conn mcpsource.MCPConn, release func() error, err error)

	mu       sync.Mutex
	adapters map[string]*promptkit.Adapter // by Args.PluginDir ("" for opts.PluginDirs)
	closed   bool
}

var _ mcpsource.MCPSource = (*Source)(nil)

// New returns a source whose adapters are made with opts (a plugin_dir
// argument replaces opts.PluginDirs). It starts nothing.
func New(opts promptkit.Options) *Source {
	s := &Source{opts: opts, adapters: make(map[string]*promptkit.Adapter)}
	s.provision = s.provisionCodegen
	return s
}

// ErrClosed is an Open after Close.
var ErrClosed = errors.New("promptkit-sandbox arena source is closed")

// Open checks args (see ParseArgs), provisions the sandbox and returns
// its MCP endpoint, the bearer token as an Authorization header, and the
// sandbox's container id (docker_codegen) or pod name (kubectl_codegen)
// as ContainerID. It returns once the endpoint answers MCP. The closer
// releases the sandbox exactly once.
func (s *Source) Open(ctx context.Context, args map[string]any) (mcpsource.MCPConn, io.Closer, error) {
	a, err := ParseArgs(args)
	if err != nil {
		return mcpsource.MCPConn{}, nil, err
	}
	conn, release, err := s.provision(ctx, a)
	if err != nil {
		return mcpsource.MCPConn{}, nil, err
	}
	return conn, &releaser{release: release}, nil
}

// Close releases every sandbox the source still holds and stops the
// plugin processes. Arena never calls it: a sandbox follows the process
// that provisioned it, and every scope closes what it opened. A program
// that runs arena's engine and goes on afterwards calls it. Close is
// idempotent; Open fails with ErrClosed from then on.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	adapters := s.adapters
	s.adapters = nil
	s.mu.Unlock()
	var errs []error
	for _, a := range adapters {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}
