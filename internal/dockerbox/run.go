package dockerbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// RunMode is the mode of a fresh container per call.
const RunMode = "docker_run"

// RunSandbox runs each call in a container of its own, created from a
// local image, attached before it starts and removed when the call ends.
type RunSandbox struct {
	name   string
	set    runSettings
	run    runner
	pool   *warmpool.Pool[prepared] // nil without a pool
	reaper warmpool.Reaper
	closed atomic.Bool
}

var (
	_ sandbox.Sandbox      = (*RunSandbox)(nil)
	_ sandbox.Streamer     = (*RunSandbox)(nil)
	_ sandbox.Closer       = (*RunSandbox)(nil)
	_ sandbox.EnvForwarder = (*RunSandbox)(nil)
)

// RunFactory builds a docker_run sandbox. It validates the configuration
// and checks that the engine answers and the image is present locally.
func RunFactory(ctx context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	set, err := parseRunConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &RunSandbox{name: name, set: set}
	if set.transport == TransportCLI {
		s.run, err = newCLIRunner(name, &s.set)
	} else {
		s.run, err = newAPIRunner(name, &s.set)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := sandbox.OpenContext(ctx)
	defer cancel()
	if err := s.run.check(ctx); err != nil {
		_ = s.run.close()
		return nil, err
	}
	if set.pool > 0 {
		s.pool = warmpool.New[prepared](set.pool, &s.reaper)
	}
	return s, nil
}

func imageMissing(image string) error {
	return sandbox.NewError(sandbox.KindStart,
		fmt.Sprintf("image %s is not present locally (build or pull it first; the docker sandbox never pulls)", image), nil)
}

// Name returns the sandbox's name.
func (s *RunSandbox) Name() string { return s.name }

// OutputLimit is the cap on each of stdout and stderr.
func (s *RunSandbox) OutputLimit() int { return s.set.outputLimit }

// ForwardedEnv is the env the config sets in every container.
func (s *RunSandbox) ForwardedEnv() []string { return slices.Clone(s.set.env) }

// Close removes the pool's containers, waits for the removal of used ones
// and releases the engine client.
func (s *RunSandbox) Close() error {
	s.closed.Store(true)
	if s.pool != nil {
		s.pool.Close()
	}
	s.reaper.Close()
	return s.run.close()
}

// Spawn runs req in a new container and returns its output.
func (s *RunSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *RunSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return s.spawn(ctx, req, shell.Streaming(stdout), stderr)
}

func (s *RunSandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	if s.closed.Load() {
		err := sandbox.NewError(sandbox.KindStart, fmt.Sprintf("command %q: the %s sandbox is closed", req.Command, RunMode), nil)
		return sandbox.Response{Err: err}, err
	}
	c := caller{mode: RunMode, set: &s.set.common, pool: s.pool, reaper: &s.reaper, prepare: s.run.prepare}
	resp, err := c.spawn(ctx, req, stdout, stderr)
	var missing *tetherMissing
	if errors.As(err, &missing) && ctx.Err() == nil {
		// The container could not run the tether, so nothing of the
		// command ran, and nothing of it was passed on: run it again
		// without the tether, in a container of its own (the pool's may
		// have been made with it), as every later container will be.
		if a, ok := s.run.(*apiRunner); ok {
			a.dropTether(missing)
		}
		c.pool = nil
		return c.spawn(ctx, req, stdout, stderr)
	}
	return resp, err
}
