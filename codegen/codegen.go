// Package codegen is the Go API for agents that want a codegen sandbox:
// an MCP server (sandboxd) on a workspace, provisioned by the plugin that
// serves the sandbox's provider mode (docker_codegen, say) as a
// RuntimeConfig declares it.
//
//	sb, err := codegen.Up(ctx, "runtime.yaml", "code", codegen.Options{Workspace: "./repo"})
//	if err != nil { ... }
//	defer sb.Close()
//	// sb.Endpoint, sb.Token: an MCP Streamable HTTP endpoint on 127.0.0.1.
//
// The sandbox lives in the plugin process this API starts: Close releases
// it and stops the plugin, and so does the death of this process (the
// plugin follows its host, and the container follows the plugin).
package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// Options tune Up.
type Options struct {
	// Host configures the plugin host: Dirs (--plugin-dir), Logger,
	// StartTimeout. ConfigDirs and, when empty, LockPath come from the
	// config file.
	Host host.Options
	// Workspace, when set, replaces the sandbox's configured workspace;
	// relative to the working directory.
	Workspace string
	// WorkspaceVolume, when set, names a workspace volume the sandbox
	// mounts as its workspace: created on first use, kept past the
	// sandbox's release unless purged, attached to one sandbox at a
	// time (docker_codegen: an engine volume; kubectl_codegen: a
	// PersistentVolumeClaim; see plugin.VolumeKeeper). It excludes
	// Workspace.
	WorkspaceVolume string
	// Timeout bounds the provisioning (plugin.DefaultProvisionTimeout
	// when zero).
	Timeout time.Duration
	// TracerProvider, when set, records the provisioning as a span
	// ("codegen.provision"), the parent of the plugin's and the
	// provider's. Without it a span ctx carries is the parent.
	TracerProvider trace.TracerProvider
}

// Sandbox is a provisioned codegen sandbox and the plugin host that
// holds it.
type Sandbox struct {
	plugin.Provisioned
	host *host.Host

	lostOnce sync.Once
	lost     chan struct{}
	why      string // set before lost closes
	closed   chan struct{}
	stopOnce sync.Once
}

// lostPoll is how often Lost looks at the plugin process; every
// deadPolls-th look it also asks the plugin whether the sandbox itself
// still runs.
const (
	lostPoll  = 250 * time.Millisecond
	deadPolls = 4
)

// Lost is closed when the sandbox is gone: the plugin process holding it
// has exited (it was killed, or crashed) and the sandbox went with it,
// or the sandbox itself died (its container exited). Its endpoint no
// longer answers; Why says which.
func (s *Sandbox) Lost() <-chan struct{} {
	s.lostOnce.Do(func() {
		s.lost = make(chan struct{})
		go func() {
			t := time.NewTicker(lostPoll)
			defer t.Stop()
			for n := 1; ; n++ {
				select {
				case <-s.closed:
					return
				case <-t.C:
				}
				if !s.host.Holds(s.ID) {
					s.why = "the plugin process holding it exited; the sandbox went with it"
					close(s.lost)
					return
				}
				if n%deadPolls == 0 {
					if why := s.dead(); why != "" {
						s.why = "it died: " + why
						close(s.lost)
						return
					}
				}
			}
		}()
	})
	return s.lost
}

// Why says how the sandbox was lost, once Lost is closed.
func (s *Sandbox) Why() string {
	select {
	case <-s.lost:
		return s.why
	default:
		return ""
	}
}

// dead asks the plugin whether the sandbox has died, as its List says
// (provision.State); "" when it runs, or when the plugin cannot tell.
func (s *Sandbox) dead() string {
	ctx, cancel := context.WithTimeout(context.Background(), lostPoll*deadPolls)
	defer cancel()
	// Without usage: the engine is not asked for every sandbox's stats
	// only to learn whether this one died.
	list, err := s.host.List(ctx, plugin.ListOptions{})
	if err != nil {
		return ""
	}
	for _, p := range list {
		if p.ID == s.ID {
			if why, dead := strings.CutPrefix(p.Details[provision.State], provision.StateDead); dead {
				return why
			}
		}
	}
	return ""
}

// Up loads the RuntimeConfig at configPath and provisions its sandbox
// name, which must be of a provider mode. It returns once the sandbox's
// MCP endpoint has answered.
func Up(ctx context.Context, configPath, name string, opts Options) (_ *Sandbox, err error) {
	h, f, err := Load(configPath, opts.Host)
	if err != nil {
		return nil, err
	}
	s, ok := f.Sandbox(name)
	if !ok {
		_ = h.Close()
		return nil, &config.Error{Problems: []config.Problem{{File: f.Path, Msg: fmt.Sprintf("no sandbox named %q (sandboxes: %s)", name, sandboxNames(f))}}}
	}
	if s.Mode == config.Direct {
		_ = h.Close()
		return nil, &config.Error{Problems: []config.Problem{{File: f.Path, Line: s.Line, Entry: "spec.sandboxes." + name, Msg: fmt.Sprintf("mode %s is not a provider mode (such as docker_codegen): it hands out no endpoint", s.Mode)}}}
	}
	workspace := opts.Workspace
	if workspace != "" {
		if workspace, err = filepath.Abs(workspace); err != nil {
			_ = h.Close()
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	ctx, end := TraceProvision(ctx, opts.TracerProvider, name, s.Mode)
	defer func() { end(err) }()
	p, err := h.ProvisionWith(ctx, *s, host.ProvisionOptions{Workspace: workspace, WorkspaceVolume: opts.WorkspaceVolume, Timeout: opts.Timeout})
	if err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("sandbox %s (%s:%d): %w", name, f.Path, s.Line, err)
	}
	return &Sandbox{Provisioned: p, host: h, closed: make(chan struct{})}, nil
}

// Close releases the sandbox and stops the plugin host.
func (s *Sandbox) Close() error {
	s.stopOnce.Do(func() { close(s.closed) })
	return errors.Join(Release(context.Background(), s.host, s.ID), s.host.Close())
}

// Release releases the sandbox id that h provisioned, waiting at most
// releaseTimeout. A sandbox that is gone already is no error: the
// provider reaped it idle (plugin.ErrNotProvisioned), or its plugin is
// gone or stopping (plugin.ErrConnection, or any KindTransport error:
// a SIGTERM to the process group reaches the plugin too), and a plugin
// releases what it holds as it stops, as the container or pod follows
// its plugin.
func Release(ctx context.Context, h *host.Host, id string) error {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	err := h.Release(ctx, id, plugin.ReleaseOptions{})
	if errors.Is(err, plugin.ErrNotProvisioned) || errors.Is(err, plugin.ErrConnection) || sandbox.KindOf(err) == sandbox.KindTransport {
		return nil
	}
	return err
}

// releaseTimeout bounds a Release: a container removal on a loaded
// engine, a pod deletion.
const releaseTimeout = time.Minute

// Load reads a RuntimeConfig with a plugin host for its modes, without
// opening any of its sandboxes.
func Load(configPath string, opts host.Options) (*host.Host, *config.File, error) {
	var h *host.Host
	f, err := config.Load(configPath, config.Options{ModesFor: func(dirs []string) (config.ModeSet, error) {
		o := opts
		o.ConfigDirs = dirs
		if o.LockPath == "" {
			o.LockPath = lockfile.Path(filepath.Dir(configPath))
		}
		var err error
		if h, err = host.New(o); err != nil {
			return nil, err
		}
		return h, nil
	}})
	if err != nil {
		if h != nil {
			_ = h.Close()
		}
		return nil, nil, err
	}
	if h == nil {
		return nil, nil, errors.New("codegen: the config loaded without a plugin host")
	}
	return h, f, nil
}

func sandboxNames(f *config.File) string {
	var names []string
	for _, s := range f.Sandboxes {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// MCPConfig is a ready-to-paste .mcp.json naming the sandbox's endpoint
// under name, with its token.
func MCPConfig(name string, p plugin.Provisioned) ([]byte, error) {
	return json.MarshalIndent(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"type":    "http",
		"url":     p.Endpoint,
		"headers": map[string]string{"Authorization": "Bearer " + p.Token},
	}}}, "", "  ")
}

// TraceProvision starts the span of provisioning sandbox name of mode,
// "codegen.provision", with tp; end records how it went. A nil tp traces
// nothing (a span ctx already carries stays the parent of the plugin's).
func TraceProvision(ctx context.Context, tp trace.TracerProvider, name, mode string) (_ context.Context, end func(error)) {
	if tp == nil {
		return ctx, func(error) {}
	}
	ctx, span := tp.Tracer("github.com/altairalabs/promptkit-sandbox/codegen").Start(ctx, "codegen.provision",
		trace.WithAttributes(attribute.String("promptkit.sandbox.name", name), attribute.String("promptkit.sandbox.mode", mode)))
	return ctx, func(err error) { tracing.End(span, err) }
}
