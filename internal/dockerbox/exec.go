package dockerbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/hashicorp/go-hclog"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// ExecMode is the mode of a command inside an already-running container.
const ExecMode = "docker_exec"

// ExecSandbox runs each call as a process inside a running container:
// remoteproc's engine runs it (through the resident, or the wrapper in an
// exec session); the sandbox is its transport, the Engine API or the
// docker CLI.
type ExecSandbox struct {
	name string
	set  execSettings
	cli  *client.Client
	d    *dockerCLI // transport cli; nil for api
	res  *residents // nil unless transport api with resident on
	eng  *remoteproc.Engine
	log  hclog.Logger
}

var (
	_ sandbox.Sandbox      = (*ExecSandbox)(nil)
	_ sandbox.Streamer     = (*ExecSandbox)(nil)
	_ sandbox.Closer       = (*ExecSandbox)(nil)
	_ sandbox.EnvForwarder = (*ExecSandbox)(nil)
)

// ExecFactory builds docker_exec sandboxes that log nothing; see
// NewExecFactory.
var ExecFactory = NewExecFactory(hclog.NewNullLogger())

// NewExecFactory returns the factory of docker_exec sandboxes, which log
// to log (a resident that could not start, and why). A sandbox validates
// its configuration and checks that the container runs and has the
// /bin/sh the sandbox runs commands through.
func NewExecFactory(log hclog.Logger) sandbox.Factory {
	return func(ctx context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
		return newExecSandbox(ctx, name, cfg, log)
	}
}

func newExecSandbox(ctx context.Context, name string, cfg map[string]any, log hclog.Logger) (sandbox.Sandbox, error) {
	set, err := parseExecConfig(cfg)
	if err != nil {
		return nil, err
	}
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	s := &ExecSandbox{name: name, set: set, cli: cli, log: log.With("sandbox", name, "mode", ExecMode)}
	if set.transport == TransportCLI {
		if s.d, err = newDockerCLI(set.dockerPath, set.extraArgs); err != nil {
			_ = cli.Close()
			return nil, err
		}
	}
	ctx, cancel := sandbox.OpenContext(ctx)
	defer cancel()
	if err := s.checkShell(ctx); err != nil {
		_ = cli.Close()
		return nil, err
	}
	opts := remoteproc.Options{Mode: ExecMode, CLI: s.d != nil, Warm: set.warm}
	if set.transport == TransportAPI && set.resident {
		s.openResident(ctx)
		opts.Resident = s.residentClient
		if s.res.Err() == nil {
			opts.Warm = 0 // the resident serves every call
		}
	}
	s.eng = remoteproc.New(containerTarget{s}, opts)
	return s, nil
}

// checkShell makes sure the container runs and can run the wrapper.
func (s *ExecSandbox) checkShell(ctx context.Context) error {
	if err := s.checkRunning(ctx); err != nil {
		if sandbox.KindOf(err) == sandbox.KindStart {
			return err
		}
		return s.openErr("inspect container "+s.set.container, err)
	}
	return remoteproc.Check(ctx, containerTarget{s}, ExecMode)
}

// Name returns the sandbox's name.
func (s *ExecSandbox) Name() string { return s.name }

// OutputLimit is the cap on each of stdout and stderr.
func (s *ExecSandbox) OutputLimit() int { return s.set.outputLimit }

// ForwardedEnv is the env the config sets in every process.
func (s *ExecSandbox) ForwardedEnv() []string { return slices.Clone(s.set.env) }

// Close ends the warm execs and the resident and releases the engine
// client.
func (s *ExecSandbox) Close() error {
	if s.eng != nil {
		s.eng.Close()
	}
	s.closeResident()
	return s.cli.Close()
}

// Spawn runs req in the container and returns its output.
func (s *ExecSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *ExecSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return s.spawn(ctx, req, shell.Streaming(stdout), stderr)
}

func (s *ExecSandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return remoteproc.Spawn(ctx, req, remoteproc.Defaults{
		Mode: ExecMode, Env: s.set.env, Timeout: s.set.timeout, OutputLimit: s.set.outputLimit,
	}, stdout, stderr, s.eng.Run)
}

// residentClient is the running resident for a call, nil when the call
// goes without one.
func (s *ExecSandbox) residentClient(ctx context.Context) *resident.Client {
	if sess := s.residentSession(ctx); sess != nil {
		return sess.rc
	}
	return nil
}

// openErr classifies a failure while the sandbox opens; the CLI
// transport's are classified already.
func (s *ExecSandbox) openErr(op string, err error) error {
	var se *sandbox.Error
	if s.d != nil && errors.As(err, &se) {
		return err
	}
	if s.d != nil {
		return sandbox.NewError(sandbox.KindTransport, "transport cli: "+op, err)
	}
	return openErr(s.cli, op, err)
}

// checkRunning reports a container that does not exist or does not run as
// a KindStart error saying which.
func (s *ExecSandbox) checkRunning(ctx context.Context) error {
	if s.d != nil {
		return s.checkRunningCLI(ctx)
	}
	c := s.set.container
	res, err := s.cli.ContainerInspect(ctx, c, client.ContainerInspectOptions{})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s does not exist", c), nil)
		}
		return err
	}
	st := res.Container.State
	switch {
	case st == nil:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s: the engine reports no state", c), nil)
	case st.Paused:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is paused", c), nil)
	case st.Restarting:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is restarting", c), nil)
	case !st.Running:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is not running (status %s)", c, st.Status), nil)
	}
	return nil
}
