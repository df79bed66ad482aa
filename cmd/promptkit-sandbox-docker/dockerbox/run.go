package dockerbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// RunMode is the mode of a fresh container per call.
const RunMode = "docker_run"

// RunSandbox runs each call in a container of its own, created from a
// local image, attached before it starts and removed when the call ends.
type RunSandbox struct {
	name string
	set  runSettings
	cli  *client.Client
}

var (
	_ sandbox.Sandbox  = (*RunSandbox)(nil)
	_ sandbox.Streamer = (*RunSandbox)(nil)
	_ sandbox.Closer   = (*RunSandbox)(nil)
)

// RunFactory builds a docker_run sandbox. It validates the configuration
// and checks that the engine answers and the image is present locally.
func RunFactory(name string, cfg map[string]any) (sandbox.Sandbox, error) {
	set, err := parseRunConfig(cfg)
	if err != nil {
		return nil, err
	}
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	s := &RunSandbox{name: name, set: set, cli: cli}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, set.image); err != nil {
		cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, imageMissing(set.image)
		}
		return nil, openErr(cli, "inspect image "+set.image, err)
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

// Close releases the engine client.
func (s *RunSandbox) Close() error { return s.cli.Close() }

// Spawn runs req in a new container and returns its output.
func (s *RunSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *RunSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return s.spawn(ctx, req, stdout, stderr)
}

func (s *RunSandbox) timeoutFor(req sandbox.Request) time.Duration {
	if req.Timeout > 0 {
		return req.Timeout
	}
	return s.set.timeout
}

func (s *RunSandbox) containerConfig(req sandbox.Request) (*container.Config, *container.HostConfig) {
	cfg := &container.Config{
		Image:        s.set.image,
		Cmd:          append([]string{req.Command}, req.Args...),
		Env:          shell.MergeEnv(s.set.env, req.Env, os.LookupEnv),
		User:         s.set.user,
		WorkingDir:   s.set.workdir,
		Labels:       labels(s.name),
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true,
		Tty:          false,
	}
	pids := s.set.pidsLimit
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(s.set.network),
		Binds:          s.set.binds,
		ReadonlyRootfs: s.set.readOnly,
		CapDrop:        s.set.capDrop,
		CapAdd:         s.set.capAdd,
		SecurityOpt:    s.set.securityOpt,
		Resources: container.Resources{
			Memory:    s.set.memory,
			NanoCPUs:  s.set.nanoCPUs,
			PidsLimit: &pids,
		},
	}
	return cfg, host
}

func (s *RunSandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (resp sandbox.Response, err error) {
	what := fmt.Sprintf("command %q", req.Command)
	timeout := s.timeoutFor(req)
	out := newOutputs(s.set.outputLimit, stdout, stderr)
	defer func() {
		out.fill(&resp, stdout != nil)
		resp.Err = err
	}()
	if req.Command == "" {
		return resp, sandbox.NewError(sandbox.KindStart, "docker_run: empty command", nil)
	}
	if ctx.Err() != nil {
		return resp, sandbox.ContextError(ctx, what, 0)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cfg, host := s.containerConfig(req)
	created, err := s.cli.ContainerCreate(cctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host})
	if err != nil {
		if cctx.Err() == nil && cerrdefs.IsNotFound(err) {
			return resp, imageMissing(s.set.image)
		}
		return resp, engineErr(cctx, s.cli, what, timeout, sandbox.KindStart, "create container from image "+s.set.image, err)
	}
	id := created.ID
	// Whatever happens from here on, the container goes: force-removal
	// kills it first if it still runs. The call's context may be done,
	// so the removal gets its own.
	defer s.remove(id)

	att, err := s.cli.ContainerAttach(cctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return resp, engineErr(cctx, s.cli, what, timeout, sandbox.KindStart, "attach to container", err)
	}
	a := newAttachment(att.HijackedResponse)
	defer a.close()
	// A hijacked connection is not tied to the context: close it when the
	// call ends early so nothing blocks on it.
	stopClose := context.AfterFunc(cctx, func() { a.hr.Close() })
	defer stopClose()

	// Registered before the start, so the exit cannot be missed.
	wait := s.cli.ContainerWait(cctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	waited := false
	defer func() {
		if !waited {
			// The client's goroutine delivers exactly one value, on an
			// unbuffered channel for a result: take it so it can end
			// (cancel, deferred earlier, makes it come).
			go func() {
				select {
				case <-wait.Result:
				case <-wait.Error:
				}
			}()
		}
	}()

	a.demux(out.stdout, out.stderr)
	if _, err := s.cli.ContainerStart(cctx, id, client.ContainerStartOptions{}); err != nil {
		// The engine could not run the command (not found in the image,
		// not executable, a bad mount): nothing of the hook ran.
		return resp, engineErr(cctx, s.cli, what, timeout, sandbox.KindStart, "start container", err)
	}
	a.feed(req.Stdin)

	var code int64
	select {
	case res := <-wait.Result:
		waited = true
		if res.Error != nil && res.Error.Message != "" {
			return resp, sandbox.NewError(sandbox.KindTransport, what+": wait for container: "+res.Error.Message, nil)
		}
		code = res.StatusCode
	case werr := <-wait.Error:
		waited = true
		return resp, engineErr(cctx, s.cli, what, timeout, sandbox.KindTransport, "wait for container", werr)
	case <-cctx.Done():
		return resp, sandbox.ContextError(cctx, what, timeout)
	}
	// The container has exited; the engine ends the stream once the last
	// of its output is sent.
	select {
	case <-a.copyDone:
	case <-cctx.Done():
		return resp, sandbox.ContextError(cctx, what, timeout)
	}
	if code != 0 {
		return resp, &sandbox.ExitError{Code: int(code)}
	}
	return resp, nil
}

// remove force-removes a container (killing it if it runs) with a context
// of its own.
func (s *RunSandbox) remove(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_, _ = s.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}
