package kubebox

import (
	"context"
	"slices"

	"errors"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Sandbox runs each call inside a container of an existing pod.
type Sandbox struct {
	name string
	set  settings
	c    cluster
	ns   string

	res *residents // nil unless transport native with resident on
	log hclog.Logger

	mu  sync.Mutex
	cur target
	eng *remoteproc.Engine // runs calls in cur
}

var (
	_ sandbox.Sandbox      = (*Sandbox)(nil)
	_ sandbox.Streamer     = (*Sandbox)(nil)
	_ sandbox.Closer       = (*Sandbox)(nil)
	_ sandbox.EnvForwarder = (*Sandbox)(nil)
)

// version is the plugin's, for the client's User-Agent.
var version = "dev"

// Factory builds kubectl_exec sandboxes that log nothing; see
// NewFactory.
var Factory = NewFactory(hclog.NewNullLogger())

// NewFactory returns the factory of kubectl_exec sandboxes, which log to
// log (a resident that could not start, and why). A sandbox validates
// its configuration, finds the pod and container, and checks that the
// container can run calls (remoteproc.Requirement).
func NewFactory(log hclog.Logger) sandbox.Factory {
	return func(ctx context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
		return newSandbox(ctx, name, cfg, log)
	}
}

func newSandbox(ctx context.Context, name string, cfg map[string]any, log hclog.Logger) (sandbox.Sandbox, error) {
	set, err := parseConfig(cfg)
	if err != nil {
		return nil, err
	}
	rc, ns, err := loadConfig(set)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, err.Error(), nil)
	}
	if set.namespace != "" {
		ns = set.namespace
	}
	s := &Sandbox{name: name, set: set, ns: ns, log: log.With("sandbox", name, "mode", Mode)}
	if set.transport == TransportCLI {
		s.c, err = newCLI(set, rc.Host)
	} else {
		s.c, err = newNative(rc, version)
	}
	if err != nil {
		return nil, err
	}
	octx, cancel := sandbox.OpenContext(ctx)
	defer cancel()
	t, err := s.resolve(octx)
	if err == nil {
		err = remoteproc.Check(octx, podTarget{s, t}, Mode)
	}
	if err != nil {
		s.c.close()
		return nil, err
	}
	s.cur = t
	if set.transport == TransportNative && set.resident {
		// Its own deadline (residentStartTimeout), not what is left of
		// DefaultOpenTimeout: the first copy into a pod can take a while.
		// The caller's own deadline still holds: it waits no longer.
		s.openResident(ctx, t)
	}
	s.eng = s.engineFor(t)
	return s, nil
}

// engineFor is the engine that runs calls in t: through the resident
// when one runs, else through exec sessions, warm ones when the sandbox
// keeps them.
func (s *Sandbox) engineFor(t target) *remoteproc.Engine {
	opts := remoteproc.Options{Mode: Mode, CLI: s.set.transport == TransportCLI}
	if s.res != nil {
		opts.Resident = func(ctx context.Context) *resident.Client {
			if sess := s.residentFor(ctx, t); sess != nil {
				return sess.rc
			}
			return nil
		}
	}
	if s.res == nil || s.res.Err() != nil {
		opts.Warm = s.set.warm
	}
	return remoteproc.New(podTarget{s, t}, opts)
}

// engine is the engine of the current target.
func (s *Sandbox) engine() *remoteproc.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng
}

// retarget moves the sandbox from the engine old to target t (the pod
// that replaced one that went away) and returns the engine for t. Calls
// that raced to do the same share the first one's engine.
func (s *Sandbox) retarget(old *remoteproc.Engine, t target) *remoteproc.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == old {
		s.cur, s.eng = t, s.engineFor(t)
		go old.Close()
	}
	return s.eng
}

// Name returns the sandbox's name.
func (s *Sandbox) Name() string { return s.name }

// OutputLimit is the cap on each of stdout and stderr.
func (s *Sandbox) OutputLimit() int { return s.set.outputLimit }

// ForwardedEnv is the env the config sets in every process.
func (s *Sandbox) ForwardedEnv() []string { return slices.Clone(s.set.env) }

// Close ends the warm sessions and releases the client.
func (s *Sandbox) Close() error {
	s.engine().Close()
	s.closeResident()
	s.c.close()
	return nil
}

// Spawn runs req in the pod and returns its output.
func (s *Sandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *Sandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return s.spawn(ctx, req, shell.Streaming(stdout), stderr)
}

func (s *Sandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return remoteproc.Spawn(ctx, req, remoteproc.Defaults{
		Mode: Mode, Env: s.set.env, Timeout: s.set.timeout, OutputLimit: s.set.outputLimit,
	}, stdout, stderr, s.run)
}

// run runs c in the current pod; a call whose pod went away before it
// started runs in the pod that replaced it, when a selector finds one.
func (s *Sandbox) run(ctx context.Context, c remoteproc.Call, stdout, stderr io.Writer) (int, error) {
	eng := s.engine()
	code, err := eng.Run(ctx, c, stdout, stderr)
	if s.set.selector == nil || !errors.Is(err, errPodGone) || !errors.Is(err, remoteproc.ErrNotRun) || ctx.Err() != nil {
		return code, err
	}
	nt, err := s.resolve(ctx)
	if err != nil {
		return 0, err
	}
	return s.retarget(eng, nt).Run(ctx, c, stdout, stderr)
}
