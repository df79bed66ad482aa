package dockerbox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// containerTarget is the sandbox's container as remoteproc's engine
// reaches it: an exec session of the Engine API, or `docker exec` of the
// CLI, as the sandbox's user and in its workdir.
type containerTarget struct{ s *ExecSandbox }

var (
	_ remoteproc.Target        = containerTarget{}
	_ remoteproc.ClientFailure = containerTarget{}
)

func (c containerTarget) String() string {
	s := c.s.set
	where := "container " + s.container
	switch {
	case s.user != "" && s.workdir != "":
		where += fmt.Sprintf(" (user %s, workdir %s)", s.user, s.workdir)
	case s.user != "":
		where += fmt.Sprintf(" (user %s)", s.user)
	case s.workdir != "":
		where += fmt.Sprintf(" (workdir %s)", s.workdir)
	}
	return where
}

func (c containerTarget) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if c.s.d != nil {
		return c.s.d.exec(ctx, c.s.execArgs(stdin != nil), argv, stdin, stdout, stderr)
	}
	return c.s.execAPI(ctx, argv, stdin, stdout, stderr)
}

// Explain says why an exec failed: an engine that cannot be reached, a
// container that is gone or stopped, or the engine's (or CLI's) words.
func (c containerTarget) Explain(ctx context.Context, err error, msg string) error {
	s := c.s
	if s.d != nil && unreachableMsg(msg) {
		return s.d.cliErr(sandbox.KindTransport, "", msg)
	}
	if s.d == nil && err != nil && isConnErr(err) {
		return unreachable(s.cli, err)
	}
	switch rerr := s.checkRunning(ctx); {
	case sandbox.KindOf(rerr) == sandbox.KindStart || sandbox.KindOf(rerr) == sandbox.KindTransport:
		return rerr
	case rerr != nil && s.d == nil && isConnErr(rerr):
		return unreachable(s.cli, rerr)
	}
	switch {
	case msg != "" && s.d != nil:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("docker exec could not start it in %s: %s", c, cliMessage(msg)), nil)
	case msg != "":
		// The wrapper never ran (a missing workdir or user, no
		// /bin/sh): the engine's words are the error, not the hook's
		// output.
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("the engine could not start it in %s: %s", c, msg), nil)
	case err != nil && s.d == nil:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("exec in %s", c), err)
	}
	return nil
}

// ClientFailure recognises the docker CLI's own failure to reach the
// engine; the API transport has no client words.
func (c containerTarget) ClientFailure(msg string) error {
	if c.s.d == nil || !unreachableMsg(msg) {
		return nil
	}
	return c.s.d.cliErr(sandbox.KindTransport, "", msg)
}

// execAPI runs argv through an exec session of the Engine API and
// returns its exit code.
func (s *ExecSandbox) execAPI(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	ec, err := s.cli.ExecCreate(ctx, s.set.container, client.ExecCreateOptions{
		User: s.set.user, WorkingDir: s.set.workdir, Cmd: argv,
		AttachStdin: stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return 0, err
	}
	att, err := s.cli.ExecAttach(ctx, ec.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, err
	}
	a := newAttachment(att.HijackedResponse)
	defer a.close()
	a.demux(stdout, stderr)
	if stdin != nil {
		a.stream(stdin)
	}
	select {
	case <-a.copyDone:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if a.copyErr != nil && isConnErr(a.copyErr) {
		return 0, a.copyErr
	}
	return s.exitCode(ctx, ec.ID)
}

// exitCode waits for the exec to be reported finished and returns its
// exit code. The output stream can end a moment before the engine records
// the exit.
func (s *ExecSandbox) exitCode(ctx context.Context, id string) (int, error) {
	delay := time.Millisecond
	for {
		res, err := s.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil {
			return 0, err
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// execArgs is the docker exec command line before the command.
func (s *ExecSandbox) execArgs(interactive bool) []string {
	args := []string{"exec"}
	if interactive {
		args = append(args, "-i")
	}
	if s.set.user != "" {
		args = append(args, "--user", s.set.user)
	}
	if s.set.workdir != "" {
		args = append(args, "--workdir", s.set.workdir)
	}
	args = append(args, s.set.extraArgs...)
	return append(args, "--", s.set.container)
}

// exec runs `docker ARGS... ARGV...` through shared/shell and returns the
// CLI's exit status (the remote command's, or the CLI's own: the
// wrapper's lines tell which).
func (d *dockerCLI) exec(ctx context.Context, args, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	code, err := shell.RunClient(ctx, d.path, append(args, argv...), nil, stdin, stdout, stderr)
	if err != nil && ctx.Err() == nil {
		return 0, sandbox.NewError(sandbox.KindTransport, "transport cli: run "+d.path, err)
	}
	return code, err
}

// checkRunningCLI is checkRunning through the CLI.
func (s *ExecSandbox) checkRunningCLI(ctx context.Context) error {
	c := s.set.container
	state, ok, err := s.d.inspect(ctx, c, "{{.State.Running}} {{.State.Paused}} {{.State.Restarting}} {{.State.Status}}")
	if err != nil {
		return err
	}
	if !ok {
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s does not exist", c), nil)
	}
	f := strings.Fields(state)
	if len(f) != 4 {
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("container %s: unexpected state %q", c, state), nil)
	}
	switch {
	case f[1] == "true":
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is paused", c), nil)
	case f[2] == "true":
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is restarting", c), nil)
	case f[0] != "true":
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("container %s is not running (status %s)", c, f[3]), nil)
	}
	return nil
}
