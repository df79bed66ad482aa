package dockerbox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The docker_exec CLI transport runs `docker exec -i` with the same
// wrapper as the API transport, so the same marker tells the hook's
// output from docker's, and the same kill script ends a call's processes.

// execArgs is the docker exec command line before the command (values of
// the environment excepted: see cliEnv).
func (s *ExecSandbox) execArgs(interactive bool, envArgs []string) []string {
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
	args = append(args, envArgs...)
	args = append(args, s.set.extraArgs...)
	return append(args, "--", s.set.container)
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

// execSimpleCLI is execSimple through the CLI.
func (s *ExecSandbox) execSimpleCLI(ctx context.Context, cmd []string, out io.Writer) (int, error) {
	stdout, stderr, code, err := s.d.run(ctx, append(s.execArgs(false, nil), cmd...)...)
	if err != nil {
		return 0, err
	}
	if code != 0 && unreachableMsg(stderr) {
		return 0, s.d.cliErr(sandbox.KindTransport, "", stderr)
	}
	_, _ = io.WriteString(out, stdout+stderr)
	return code, nil
}

// execCLIPrepared is a `docker exec -i` process running the wrapper.
type execCLIPrepared struct {
	s    *ExecSandbox
	spec runSpec
	*cliProcess

	mk             *marker
	stdout, stderr *heldOutput
	discardOnce    sync.Once
}

func (s *ExecSandbox) prepareCLI(ctx context.Context, spec runSpec) (prepared, error) {
	if ctx.Err() != nil {
		return nil, sandbox.ContextError(ctx, spec.what, spec.timeout)
	}
	envArgs, procEnv, cleanupEnv, err := cliEnv(spec.env)
	if err != nil {
		return nil, err
	}
	args := append(s.execArgs(true, envArgs), "/bin/sh", "-c", wrapperScript, spec.command)
	p := &execCLIPrepared{s: s, spec: spec}
	p.stdout, p.stderr = newHeldOutput(s.set.outputLimit), newHeldOutput(s.set.outputLimit)
	p.mk = newMarker(p.stdout, p.stderr)
	// The CLI's two streams are copied by two goroutines; the marker
	// expects one writer at a time.
	var mu sync.Mutex
	p.cliProcess, err = s.d.start(append(args, spec.args...), procEnv, cleanupEnv,
		lockedWriter{&mu, p.mk.stdoutWriter()}, lockedWriter{&mu, p.mk})
	if err != nil {
		return nil, err
	}
	return p, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (p *execCLIPrepared) warm(ctx context.Context) error {
	select {
	case <-p.mk.known:
		return nil
	case <-p.exited:
		return fmt.Errorf("warm exec in container %s ended before its call", p.s.set.container)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *execCLIPrepared) stale() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *execCLIPrepared) finish(ctx context.Context, stdin []byte, out outputs) (int, error) {
	s, mk, what, timeout := p.s, p.mk, p.spec.what, p.spec.timeout
	p.stdout.claim(out.stdout)
	p.stderr.claim(out.stderr)
	fed := p.feed(append([]byte(goLine), stdin...))
	select {
	case <-p.exited:
	case <-ctx.Done():
		// Killing the local CLI would leave the process running in the
		// container: kill it, and everything it started, there first.
		s.killTree(mk)
		p.kill()
		<-fed
		mk.release()
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	<-fed
	code, err := p.exitCode(what)
	if err != nil {
		return 0, err
	}
	switch mk.state() {
	case markerNotFound:
		return 0, sandbox.NewError(sandbox.KindStart,
			fmt.Sprintf("%s: not found (or not executable) in container %s", what, s.set.container), nil)
	case markerNone:
		if code != 0 {
			// The wrapper never ran: these are the CLI's words.
			msg := mk.engineMessage()
			if unreachableMsg(msg) {
				return 0, s.d.cliErr(sandbox.KindTransport, "", msg)
			}
			if rerr := s.checkRunningCLI(ctx); sandbox.KindOf(rerr) == sandbox.KindStart || sandbox.KindOf(rerr) == sandbox.KindTransport {
				return 0, rerr
			}
			return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
				"%s: docker exec could not start it in container %s: %s", what, s.set.container, cliMessage(msg)), nil)
		}
	}
	mk.release()
	return code, nil
}

// discard closes the wrapper's stdin: a warm one exits unrun. A CLI that
// does not go is killed.
func (p *execCLIPrepared) discard() {
	p.discardOnce.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(waitDelay):
			p.kill()
		}
		p.cleanupEnv()
	})
}
