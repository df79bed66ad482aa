package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Open opens the sandbox s declares in the plugin that serves its mode.
// The plugin validates the configuration; its complaint comes back as the
// error, verbatim.
func (h *Host) Open(s config.Sandbox) (sandbox.Sandbox, error) {
	timeout := s.OpenBound()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	srv, err := h.resolve(ctx, s.Mode, s.Plugin, s.Version)
	if err != nil {
		return nil, err
	}
	ps := &pluginSandbox{name: s.Name, mode: s.Mode, cfg: s.Config, inst: srv.inst, openTimeout: timeout}
	if _, _, err := ps.remote(ctx); err != nil {
		if sandbox.Done(ctx) {
			return nil, sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("open sandbox %s in plugin %s: no answer within %s (open_timeout)",
				s.Name, ps.Plugin(), timeout), nil)
		}
		return nil, err
	}
	srv.inst.opened.Store(true)
	return ps, nil
}

// pluginSandbox is a sandbox served by a plugin process. It survives the
// process: after a crash the next call starts a new process (instance.live)
// and opens the sandbox in it again with the same configuration.
type pluginSandbox struct {
	name        string
	mode        string
	cfg         map[string]any
	inst        *instance
	openTimeout time.Duration // bounds a reopen when a call sets no timeout

	mu     sync.Mutex
	open   *plugin.RemoteSandbox
	gen    int
	closed bool
}

var (
	_ sandbox.Closer       = (*pluginSandbox)(nil)
	_ sandbox.Streamer     = (*pluginSandbox)(nil)
	_ sandbox.EnvForwarder = (*pluginSandbox)(nil)
	_ plugin.OutputLimiter = (*pluginSandbox)(nil)
)

func (s *pluginSandbox) Name() string { return s.name }

// OutputLimit is the per-stream cap the plugin reported when it last
// opened the sandbox (0 before it has), so that whoever passes the
// sandbox on — promptkit-sandbox serve lends it to exec calls — keeps as
// much of a stream as the plugin sends.
func (s *pluginSandbox) OutputLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		return 0
	}
	return s.open.OutputLimit()
}

// ForwardedEnv is what the plugin reported, when it last opened the
// sandbox, that the sandbox sets in every process (nil before it has):
// the hooks runtime redacts those values from what it quotes of a hook.
func (s *pluginSandbox) ForwardedEnv() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		return nil
	}
	return s.open.ForwardedEnv()
}

// Plugin names the plugin serving the sandbox, for humans: "docker 1.2.0
// (/path/to/promptkit-sandbox-docker_v1.2.0)".
func (s *pluginSandbox) Plugin() string { return s.inst.cand.String() }

func (s *pluginSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.call(ctx, req, func(ctx context.Context, rs *plugin.RemoteSandbox) (sandbox.Response, error) {
		return rs.Spawn(ctx, req)
	})
}

// SpawnStreaming is Spawn with the output written to stdout and stderr
// as the plugin sends it (see sandbox.Streamer).
func (s *pluginSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return s.call(ctx, req, func(ctx context.Context, rs *plugin.RemoteSandbox) (sandbox.Response, error) {
		return rs.SpawnStreaming(ctx, req, stdout, stderr)
	})
}

// call runs one call through the sandbox as opened in the live plugin
// process, reopening it there first when the process is new.
func (s *pluginSandbox) call(ctx context.Context, req sandbox.Request, run func(context.Context, *plugin.RemoteSandbox) (sandbox.Response, error)) (sandbox.Response, error) {
	// The call's deadline (set here unless the caller set it) bounds all
	// of it: starting a plugin process again and reopening the sandbox
	// in it too. What they take comes out of the time the hook has.
	ctx, cancel := sandbox.Enter(ctx, req.Timeout)
	defer cancel()
	rctx := ctx
	if req.Timeout <= 0 && s.openTimeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, s.openTimeout)
		defer cancel()
	}
	rs, gen, err := s.remote(rctx)
	if err != nil {
		if sandbox.Done(rctx) {
			err = sandbox.ContextError(rctx, fmt.Sprintf("command %q: reopen sandbox %s in plugin %s", req.Command, s.name, s.Plugin()), req.Timeout)
		} else if sandbox.KindOf(err) == sandbox.KindUnknown {
			// The plugin rejected the configuration it accepted before:
			// nothing ran.
			err = sandbox.Errorf(sandbox.KindStart, "reopen sandbox %s in plugin %s: %w", s.name, s.Plugin(), err)
		}
		return sandbox.Response{Err: err}, err
	}
	resp, err := run(ctx, rs)
	// Only the hop's own failure retires the process: a backend's
	// transport error is this call's alone, and the plugin goes on
	// serving every other call. So does a process found stopped when a
	// call timed out on it: it would answer no call again, and each would
	// wait its whole timeout; killed, the next call starts a new one.
	if errors.Is(err, plugin.ErrConnection) || errors.Is(err, sandbox.ErrTimeout) && s.inst.frozen() {
		s.inst.broken(gen)
	}
	return resp, err
}

// remote returns the sandbox as opened in the current plugin process,
// opening it there first if the process is new.
func (s *pluginSandbox) remote(ctx context.Context) (*plugin.RemoteSandbox, int, error) {
	rpc, gen, err := s.inst.live(ctx)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, 0, sandbox.NewError(sandbox.KindStart, "sandbox "+s.name+" is closed", nil)
	}
	if s.open != nil && s.gen == gen {
		return s.open, gen, nil
	}
	rs, err := rpc.Open(ctx, s.name, s.mode, s.cfg)
	if err != nil {
		if errors.Is(err, plugin.ErrConnection) {
			s.inst.broken(gen)
		}
		return nil, 0, err
	}
	s.open, s.gen = rs, gen
	return rs, gen, nil
}

// Close releases the sandbox in the plugin (a backend may hold a pool of
// containers for it). The plugin process keeps running for others.
func (s *pluginSandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.open == nil {
		return nil
	}
	open := s.open
	s.open = nil
	if s.inst.frozen() {
		// Asking would wait closeTimeout for nothing: the host kills
		// the process when it closes.
		return sandbox.Errorf(sandbox.KindTransport, "close sandbox %s: plugin %s is stopped (SIGSTOP or a tracer); not asked", s.name, s.Plugin())
	}
	return open.Close()
}
