package dockerbox

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
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
	if s.init {
		args = append(args, "--init")
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
	r    *cliRunner
	spec runSpec
	name string
	*cliProcess

	stdout *warmpool.Held
	// stderr is kept until the call ends: the CLI writes its own errors
	// there, and only once the exit code is known can they be told from
	// the hook's output.
	stderr      *warmpool.Held
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
	p := &cliPrepared{r: r, spec: spec, name: containerName()}
	p.stdout, p.stderr = warmpool.NewHeld(r.set.outputLimit), warmpool.NewHeld(r.set.outputLimit)
	if p.cliProcess, err = r.d.start(r.runArgs(p.name, envArgs, spec), procEnv, cleanupEnv, p.stdout, p.stderr); err != nil {
		return nil, err
	}
	return p, nil
}

// warm waits until the CLI has the container running (or has exited), so
// a pooled call is one whose start is done.
func (p *cliPrepared) Warm(ctx context.Context) error {
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

func (p *cliPrepared) finish(ctx context.Context, stdin []byte, out shell.Outputs) (int, error) {
	what, timeout := p.spec.what, p.spec.timeout
	p.stdout.Claim(out.Stdout)
	fed := p.feed(stdin)
	select {
	case <-p.exited:
	case <-ctx.Done():
		// fed ends once the CLI does; Discard sees to that.
		p.stop(out.Stderr)
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	<-fed
	code, err := p.exitCode(what)
	if err != nil {
		return 0, err
	}
	if code == 125 || code == 126 || code == 127 || code < 0 {
		// docker's own failures use these codes too: the container
		// tells whose it is.
		if err := p.dockerFailure(ctx); err != nil {
			return 0, err
		}
		if msg, ok := initExecFailed(code, []byte(p.stderr.Text())); ok && p.r.set.init {
			return 0, initStartError(what, msg)
		}
	}
	p.stderr.Claim(out.Stderr)
	return code, nil
}

// dockerFailure tells docker's failure from the hook's exit 125-127: the
// CLI failed if it made no container, or the engine could not start it.
func (p *cliPrepared) dockerFailure(ctx context.Context) error {
	what := p.spec.what
	msg := p.stderr.Text()
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

// stop ends a call that ran out of time or was cancelled, within
// stopBudget. It passes on at once what the hook wrote to stderr so far
// (a plugin host waits only a moment past the timeout for it), kills the
// container, so nothing of the call runs on, and lets the CLI pass on
// what the hook wrote before it died: the CLI of a killed container exits
// (137) without a word of its own. When there was no container to kill,
// or the CLI outlives the budget, stderr stops there: what the CLI says
// while its container is removed ("marked for removal") is not the
// hook's. Discard, which runs next in the background, removes the
// container and ends the CLI.
func (p *cliPrepared) stop(stderr io.Writer) {
	p.stderr.Claim(stderr)
	deadline := time.Now().Add(stopBudget)
	killed := p.killContainer(deadline)
	if killed {
		select {
		case <-p.exited:
		case <-time.After(time.Until(deadline)):
			killed = false
		}
	}
	// Nothing reaches the call's writers once Spawn has returned.
	p.stdout.Drop()
	p.stderr.Drop()
}

// killContainer kills the call's container. A CLI still creating it has
// none to kill yet: it tries again until the container shows up, the CLI
// exits, or deadline passes. It reports whether it found one.
func (p *cliPrepared) killContainer(deadline time.Time) bool {
	for !p.r.d.killContainer(p.name, deadline) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-p.exited:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// discard removes the container and ends the CLI.
func (p *cliPrepared) Discard() {
	p.discardOnce.Do(func() {
		p.removeThenKill()
		_ = p.stdin.Close()
		p.cleanupEnv()
	})
}

// removeThenKill removes the call's container, so nothing of the call
// goes on running, and only then ends the CLI. A `docker run` killed
// while the engine is still creating its container leaves that create to
// finish after any removal, and the container to run on: so the CLI
// lives until a removal has found the container, or until it has exited
// by itself, within cleanupTimeout.
func (p *cliPrepared) removeThenKill() {
	deadline := time.Now().Add(cleanupTimeout)
	for !p.r.d.removeContainer(p.name) && time.Now().Before(deadline) {
		select {
		case <-p.exited:
			// It made no container, or left one behind as it ended.
			p.r.d.removeContainer(p.name)
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.kill()
}
