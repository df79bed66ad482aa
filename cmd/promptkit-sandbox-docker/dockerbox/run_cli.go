package dockerbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// cliRunner runs docker_run containers with `docker run -i`, as the
// reference backends do, with the same settings as the API transport.
type cliRunner struct {
	name string
	set  *runSettings
	d    *dockerCLI
}

func newCLIRunner(name string, set *runSettings) (runner, error) {
	d, err := newDockerCLI(set.dockerPath, set.extraArgs)
	if err != nil {
		return nil, err
	}
	return &cliRunner{name: name, set: set, d: d}, nil
}

func (r *cliRunner) close() error { return nil }

func (r *cliRunner) check(ctx context.Context) error {
	_, stderr, code, err := r.d.run(ctx, "image", "inspect", "--format", "{{.Id}}", r.set.image)
	switch {
	case err != nil:
		return sandbox.NewError(sandbox.KindStart, "transport cli: run the docker CLI", err)
	case code == 0:
		return nil
	case unreachableMsg(stderr):
		return r.d.cliErr(sandbox.KindTransport, "", stderr)
	case strings.Contains(stderr, "No such image"):
		return imageMissing(r.set.image)
	}
	return r.d.cliErr(sandbox.KindTransport, "inspect image "+r.set.image, stderr)
}

// runArgs is the docker run command line for spec (environment values
// excepted: see cliEnv).
func (r *cliRunner) runArgs(name string, envArgs []string, spec runSpec) []string {
	s := r.set
	args := []string{"run", "-i", "--pull", "never", "--name", name, "--network", s.network,
		"--pids-limit", strconv.FormatInt(s.pidsLimit, 10)}
	for k, v := range labels(r.name) {
		args = append(args, "--label", k+"="+v)
	}
	for _, c := range s.capDrop {
		args = append(args, "--cap-drop", c)
	}
	for _, c := range s.capAdd {
		args = append(args, "--cap-add", c)
	}
	for _, o := range s.securityOpt {
		args = append(args, "--security-opt", o)
	}
	for _, b := range s.binds {
		args = append(args, "-v", b)
	}
	if s.memory > 0 {
		args = append(args, "--memory", strconv.FormatInt(s.memory, 10))
	}
	if s.nanoCPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(float64(s.nanoCPUs)/1e9, 'f', -1, 64))
	}
	if s.readOnly {
		args = append(args, "--read-only")
	}
	if s.user != "" {
		args = append(args, "--user", s.user)
	}
	if s.workdir != "" {
		args = append(args, "--workdir", s.workdir)
	}
	args = append(args, envArgs...)
	args = append(args, s.extraArgs...)
	args = append(args, "--", s.image, spec.command)
	return append(args, spec.args...)
}

// cliPrepared is a `docker run -i` process started ahead of its call:
// the container is created and started by the CLI, its stdin open.
type cliPrepared struct {
	r     *cliRunner
	spec  runSpec
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser

	stdout *heldOutput
	stderr *cliStderr
	exited chan struct{} // closed when the CLI has exited
	err    error         // cmd.Wait's, valid once exited is closed

	cleanupEnv  func()
	discardOnce sync.Once
}

func (r *cliRunner) prepare(ctx context.Context, spec runSpec) (prepared, error) {
	if ctx.Err() != nil {
		return nil, sandbox.ContextError(ctx, spec.what, spec.timeout)
	}
	envArgs, procEnv, cleanupEnv, err := cliEnv(spec.env)
	if err != nil {
		return nil, err
	}
	p := &cliPrepared{r: r, spec: spec, name: containerName(), exited: make(chan struct{}), cleanupEnv: cleanupEnv}
	p.cmd = r.d.command(r.runArgs(p.name, envArgs, spec), procEnv)
	p.stdout = newHeldOutput(r.set.outputLimit)
	p.stderr = &cliStderr{limit: r.set.outputLimit}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = waitDelay
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		cleanupEnv()
		return nil, sandbox.NewError(sandbox.KindStart, "transport cli: stdin pipe", err)
	}
	if err := p.cmd.Start(); err != nil {
		cleanupEnv()
		return nil, sandbox.NewError(sandbox.KindStart, "transport cli: start "+r.d.path, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// warm waits until the CLI has the container running (or has exited), so
// a pooled call is one whose start is done.
func (p *cliPrepared) warm(ctx context.Context) error {
	delay := 20 * time.Millisecond
	for {
		select {
		case <-p.exited:
			return nil // finish reports what happened
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		state, ok, err := p.r.d.inspect(ctx, p.name, "{{.State.Running}}")
		if err != nil {
			return err
		}
		if ok && state == "true" {
			return nil
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func (p *cliPrepared) finish(ctx context.Context, stdin []byte, out outputs) (int, error) {
	what, timeout := p.spec.what, p.spec.timeout
	p.stdout.claim(out.stdout)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if len(stdin) > 0 {
			_, _ = p.stdin.Write(stdin)
		}
		_ = p.stdin.Close()
	}()
	select {
	case <-p.exited:
	case <-ctx.Done():
		// The container first, so nothing of the call goes on running;
		// then the CLI.
		p.r.d.removeContainer(p.name)
		killCLI(p.cmd)
		<-p.exited
		<-fed
		p.stderr.deliver(out.stderr)
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	<-fed
	p.cleanupEnv()
	code := 0
	var xe *exec.ExitError
	switch {
	case errors.As(p.err, &xe):
		code = xe.ExitCode()
	case p.err != nil:
		return 0, sandbox.NewError(sandbox.KindTransport, what+": the docker CLI", p.err)
	}
	if code == 125 || code == 126 || code == 127 || code < 0 {
		// docker's own failures use these codes too: the container
		// tells whose it is.
		if err := p.dockerFailure(ctx); err != nil {
			return 0, err
		}
	}
	p.stderr.deliver(out.stderr)
	return code, nil
}

// dockerFailure tells docker's failure from the hook's exit 125-127: the
// CLI failed if it made no container, or the engine could not start it.
func (p *cliPrepared) dockerFailure(ctx context.Context) error {
	what := p.spec.what
	msg := p.stderr.text()
	state, ok, err := p.r.d.inspect(ctx, p.name, "{{.State.Error}}")
	switch {
	case err != nil && ctx.Err() != nil:
		return sandbox.ContextError(ctx, what, p.spec.timeout)
	case err != nil:
		return err
	case !ok:
		if strings.Contains(msg, "No such image") {
			return imageMissing(p.r.set.image)
		}
		return p.r.d.cliErr(sandbox.KindStart, what+": docker run", msg)
	case state != "":
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: the engine could not start it: %s", what, cliMessage(msg)), nil)
	}
	return nil
}

// discard removes the container and ends the CLI.
func (p *cliPrepared) discard() {
	p.discardOnce.Do(func() {
		p.r.d.removeContainer(p.name)
		killCLI(p.cmd)
		_ = p.stdin.Close()
		<-p.exited
		p.cleanupEnv()
		// A create still under way when the CLI died may finish after
		// the removal above.
		p.r.d.removeContainer(p.name)
	})
}

// cliStderr keeps the CLI's stderr until the call ends: the CLI writes
// its own errors there, and only once the exit code is known can they be
// told from the hook's output.
type cliStderr struct {
	limit int

	mu        sync.Mutex
	buf       []byte
	truncated bool
}

func (c *cliStderr) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := p
	if room := c.limit - len(c.buf); len(keep) > room {
		keep = keep[:max(room, 0)]
		c.truncated = true
	}
	c.buf = append(c.buf, keep...)
	return len(p), nil
}

func (c *cliStderr) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// deliver passes what was kept on to the call's stderr.
func (c *cliStderr) deliver(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buf) > 0 {
		_, _ = w.Write(c.buf)
	}
	if c.truncated {
		_, _ = w.Write([]byte{0})
	}
	c.buf = nil
}
