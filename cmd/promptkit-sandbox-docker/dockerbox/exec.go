package dockerbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/shared/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// ExecMode is the mode of a command inside an already-running container.
const ExecMode = "docker_exec"

// The wrapper every docker_exec command runs under, as
// /bin/sh -c wrapperScript COMMAND ARGS... (so $0 is the command). Before
// it replaces itself with the command it checks that the command exists,
// reports its own PID (which becomes the command's) as the first line of
// stderr (the sandbox strips that line), and waits for a first line on
// stdin (goLine, which the sandbox writes before the call's stdin: the
// shell's read takes nothing past it). A warm exec is one started ahead
// of its call and waiting there; closing its stdin ends it unrun. The PID, in the container's PID
// namespace, is what a timeout kills the process tree by; "notfound" tells
// a command the container lacks from a hook that exits 127.
const (
	goLine        = "\n"
	markerPrefix  = "\x1epks:"
	wrapperScript = `case $0 in */*) [ -f "$0" ] && [ -x "$0" ];; *) command -v "$0" >/dev/null 2>&1;; esac ||` +
		` { printf '\036pks:notfound\n' >&2; exit 127; }; printf '\036pks:%s\n' "$$" >&2;` +
		` IFS= read -r _ || exit 0; exec "$0" "$@"`
)

// A timeout kills the call's process tree with remoteproc's kill script,
// by the PID the wrapper reported: the engine starts an exec'd process as
// a session leader, as the kill script expects.

// ExecSandbox runs each call as a process inside a running container,
// through the engine's exec API.
type ExecSandbox struct {
	name   string
	set    execSettings
	cli    *client.Client
	d      *dockerCLI // transport cli; nil for api
	pool   *pool      // warm execs; nil when warm is 0 or a resident runs
	res    *residents // nil unless transport api with resident on
	reaper reaper
}

var (
	_ sandbox.Sandbox  = (*ExecSandbox)(nil)
	_ sandbox.Streamer = (*ExecSandbox)(nil)
	_ sandbox.Closer   = (*ExecSandbox)(nil)
)

// ExecFactory builds a docker_exec sandbox. It validates the configuration
// and checks that the container runs and has the /bin/sh the sandbox runs
// commands through.
func ExecFactory(name string, cfg map[string]any) (sandbox.Sandbox, error) {
	set, err := parseExecConfig(cfg)
	if err != nil {
		return nil, err
	}
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	s := &ExecSandbox{name: name, set: set, cli: cli}
	if set.transport == TransportCLI {
		if s.d, err = newDockerCLI(set.dockerPath, set.extraArgs); err != nil {
			cli.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := s.checkShell(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	if set.transport == TransportAPI && set.resident {
		s.openResident(ctx)
	}
	if set.warm > 0 && (s.res == nil || s.res.Err() != nil) {
		s.pool = newPool(set.warm, s, &s.reaper)
	}
	return s, nil
}

// Name returns the sandbox's name.
func (s *ExecSandbox) Name() string { return s.name }

// OutputLimit is the cap on each of stdout and stderr.
func (s *ExecSandbox) OutputLimit() int { return s.set.outputLimit }

// Close ends the warm execs and releases the engine client.
func (s *ExecSandbox) Close() error {
	if s.pool != nil {
		s.pool.close()
	}
	s.closeResident()
	s.reaper.close()
	return s.cli.Close()
}

// check and close make the sandbox the runner of its own warm pool.
func (s *ExecSandbox) check(ctx context.Context) error { return s.checkShell(ctx) }
func (s *ExecSandbox) close() error                    { return nil }

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

// checkShell makes sure the container runs and can run the wrapper.
func (s *ExecSandbox) checkShell(ctx context.Context) error {
	if err := s.checkRunning(ctx); err != nil {
		if sandbox.KindOf(err) == sandbox.KindStart {
			return err
		}
		return s.openErr("inspect container "+s.set.container, err)
	}
	var out bytes.Buffer
	code, err := s.execSimple(ctx, remoteproc.CheckArgv(), &out)
	if err != nil {
		return s.openErr("exec in container "+s.set.container, err)
	}
	if code != 0 {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 512 {
			msg = msg[:512]
		}
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
			"container %s cannot run docker_exec commands (user %q, workdir %q): it needs /bin/sh with kill and a mounted /proc "+
				"(commands run under /bin/sh so a timeout can kill them and their children inside the container); "+
				"the check exited %d: %s", s.set.container, s.set.user, s.set.workdir, code, msg), nil)
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

// execSimple runs cmd in the container without stdin and returns its exit
// code, its output (both streams) in out.
func (s *ExecSandbox) execSimple(ctx context.Context, cmd []string, out io.Writer) (int, error) {
	if s.d != nil {
		return s.execSimpleCLI(ctx, cmd, out)
	}
	ec, err := s.cli.ExecCreate(ctx, s.set.container, client.ExecCreateOptions{
		User: s.set.user, WorkingDir: s.set.workdir, Cmd: cmd, AttachStdout: true, AttachStderr: true,
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
	a.demux(out, out)
	select {
	case <-a.copyDone:
	case <-ctx.Done():
		return 0, ctx.Err()
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

// Spawn runs req in the container and returns its output.
func (s *ExecSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *ExecSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return s.spawn(ctx, req, stdout, stderr)
}

func (s *ExecSandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	return caller{mode: ExecMode, set: &s.set.common, pool: s.pool, reaper: &s.reaper, prepare: s.prepare}.spawn(ctx, req, stdout, stderr)
}

// execPrepared is an exec created and attached in the container, its
// wrapper waiting for the go line.
type execPrepared struct {
	s    *ExecSandbox
	spec runSpec
	id   string

	att            *attachment
	mk             *marker
	stdout, stderr *heldOutput
	discardOnce    sync.Once
}

// prepare creates the exec for spec and starts it: its wrapper checks the
// command, reports its PID and waits for the call.
func (s *ExecSandbox) prepare(ctx context.Context, spec runSpec) (prepared, error) {
	if s.d != nil {
		return s.prepareCLI(ctx, spec)
	}
	if sess := s.residentSession(ctx); sess != nil {
		return &residentCall{s: s, sess: sess, spec: spec}, nil
	}
	cmd := append([]string{"/bin/sh", "-c", wrapperScript, spec.command}, spec.args...)
	ec, err := s.cli.ExecCreate(ctx, s.set.container, client.ExecCreateOptions{
		User:         s.set.user,
		WorkingDir:   s.set.workdir,
		Env:          spec.env,
		Cmd:          cmd,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		if ctx.Err() == nil && !isConnErr(err) {
			// Say why: the container is gone, stopped or paused.
			if rerr := s.checkRunning(ctx); sandbox.KindOf(rerr) == sandbox.KindStart {
				return nil, rerr
			}
		}
		return nil, engineErr(ctx, s.cli, spec.what, spec.timeout, sandbox.KindStart, "create exec in container "+s.set.container, err)
	}
	att, err := s.cli.ExecAttach(ctx, ec.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, engineErr(ctx, s.cli, spec.what, spec.timeout, sandbox.KindStart, "start exec in container "+s.set.container, err)
	}
	p := &execPrepared{s: s, spec: spec, id: ec.ID, att: newAttachment(att.HijackedResponse)}
	p.stdout, p.stderr = newHeldOutput(s.set.outputLimit), newHeldOutput(s.set.outputLimit)
	p.mk = newMarker(p.stdout, p.stderr)
	p.att.demux(p.mk.stdoutWriter(), p.mk)
	return p, nil
}

// warm waits until the wrapper runs and waits for its call, so a warm
// exec in the pool is one a call gets at once.
func (p *execPrepared) warm(ctx context.Context) error {
	select {
	case <-p.mk.known:
		return nil
	case <-p.att.copyDone:
		return fmt.Errorf("warm exec in container %s ended before its call", p.s.set.container)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stale reports a warm exec that ended before its call (its container
// stopped or restarted): it never ran the command.
func (p *execPrepared) stale() bool {
	select {
	case <-p.att.copyDone:
		return true
	default:
		return false
	}
}

func (p *execPrepared) finish(ctx context.Context, stdin []byte, out outputs) (int, error) {
	s, mk, what, timeout := p.s, p.mk, p.spec.what, p.spec.timeout
	p.stdout.claim(out.stdout)
	p.stderr.claim(out.stderr)
	p.att.feed(append([]byte(goLine), stdin...))

	if err := s.await(ctx, p.id, p.att, mk); err != nil {
		// Closing the connection would leave the process running: kill
		// it, and everything it started, inside the container first.
		s.killTree(mk)
		p.att.close()
		mk.release()
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	code, err := s.exitCode(ctx, p.id)
	if err != nil {
		if ctx.Err() != nil {
			s.killTree(mk)
		}
		mk.release()
		return 0, engineErr(ctx, s.cli, what, timeout, sandbox.KindTransport, "inspect exec", err)
	}
	switch mk.state() {
	case markerNotFound:
		return 0, sandbox.NewError(sandbox.KindStart,
			fmt.Sprintf("%s: not found (or not executable) in container %s", what, s.set.container), nil)
	case markerNone:
		if code != 0 {
			// The wrapper never ran: the engine could not start it (a
			// missing workdir or user, no /bin/sh). Its words are the
			// error, not the hook's output.
			return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
				"%s: the engine could not start it in container %s: %s", what, s.set.container, mk.engineMessage()), nil)
		}
	}
	mk.release()
	if p.att.copyErr != nil && isConnErr(p.att.copyErr) {
		return 0, unreachable(s.cli, p.att.copyErr)
	}
	return code, nil
}

// discard ends the exec's connection: a wrapper still waiting for its
// call reads end of file and exits without running the command.
func (p *execPrepared) discard() {
	p.discardOnce.Do(func() { p.att.close() })
}

// pollExit is how often a running call asks the engine whether its
// command has exited, and orphanGrace how long the output may stay open
// after it has: longer means a leftover child holds it, and is killed.
const (
	pollExit    = 250 * time.Millisecond
	orphanGrace = 100 * time.Millisecond
)

// await waits for the output stream to end. When the command exits but
// processes it left behind keep the stream open, they are killed, as the
// direct backend kills what is left of a process group. It returns
// ctx.Err() when the call's context ends first.
func (s *ExecSandbox) await(ctx context.Context, id string, a *attachment, mk *marker) error {
	tick := time.NewTicker(pollExit)
	defer tick.Stop()
	for {
		select {
		case <-a.copyDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		res, err := s.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil || res.Running {
			continue
		}
		select {
		case <-a.copyDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(orphanGrace):
		}
		s.killTree(mk)
		select {
		case <-a.copyDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// killTree kills the call's process and its descendants inside the
// container, with a context of its own (the call's is done).
func (s *ExecSandbox) killTree(mk *marker) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	// The wrapper reports its PID before anything else; if it has not yet,
	// it is about to.
	var pid int
	select {
	case <-mk.known:
		pid = mk.pid
	case <-time.After(cleanupTimeout / 2):
	}
	if pid <= 0 {
		return
	}
	_, _ = s.execSimple(ctx, remoteproc.KillArgv(pid), io.Discard)
}

// marker strips the wrapper's first stderr line and remembers what it
// said; everything else passes through. Until that line has come, stdout
// is held back too: if it never comes, what the stream carried is the
// engine's own error ("OCI runtime exec failed: ..."), which must not
// reach the hook's output. Both writers are used from the one goroutine
// that demultiplexes the stream.
type marker struct {
	stderr io.Writer
	stdout io.Writer
	head   []byte // stderr held back
	held   []byte // stdout held back
	done   bool   // the first stderr line has been dealt with
	known  chan struct{}

	mu       sync.Mutex
	pid      int
	notFound bool
	seen     bool
}

type markerState int

const (
	markerNone markerState = iota
	markerPID
	markerNotFound
)

// maxHeld bounds what is held back while waiting for the wrapper's line;
// past it the output is passed on as it is.
const maxHeld = 1 << 20

func newMarker(stdout, stderr io.Writer) *marker {
	return &marker{stdout: stdout, stderr: stderr, known: make(chan struct{})}
}

// stdoutWriter is where the demultiplexer writes stdout.
func (m *marker) stdoutWriter() io.Writer { return markerStdout{m} }

type markerStdout struct{ m *marker }

func (w markerStdout) Write(p []byte) (int, error) {
	m := w.m
	if m.done {
		return m.stdout.Write(p)
	}
	m.held = append(m.held, p...)
	if len(m.held) > maxHeld {
		m.release()
	}
	return len(p), nil
}

func (m *marker) Write(p []byte) (int, error) {
	if m.done {
		return m.stderr.Write(p)
	}
	n := len(p)
	m.head = append(m.head, p...)
	// The wrapper writes its line before anything else: stderr that does
	// not start with it comes from the engine or the docker CLI, before
	// the wrapper ran. It is held (the call's error will carry it) unless
	// it grows past maxHeld.
	if len(m.head) < len(markerPrefix) {
		if !strings.HasPrefix(markerPrefix, string(m.head)) && len(m.head) > maxHeld {
			m.release()
		}
		return n, nil
	}
	if !bytes.HasPrefix(m.head, []byte(markerPrefix)) {
		if len(m.head) > maxHeld {
			m.release()
		}
		return n, nil
	}
	i := bytes.IndexByte(m.head, '\n')
	if i < 0 {
		if len(m.head) > 64 {
			m.release()
		}
		return n, nil
	}
	line := string(m.head[len(markerPrefix):i])
	m.head = m.head[i+1:]
	m.mu.Lock()
	m.seen = true
	if line == "notfound" {
		m.notFound = true
	} else if pid, err := strconv.Atoi(line); err == nil {
		m.pid = pid
		close(m.known)
	}
	m.mu.Unlock()
	m.release()
	return n, nil
}

// release passes on whatever was held back and lets the rest through.
func (m *marker) release() {
	if m.done {
		return
	}
	m.done = true
	if len(m.held) > 0 {
		_, _ = m.stdout.Write(m.held)
	}
	if len(m.head) > 0 {
		_, _ = m.stderr.Write(m.head)
	}
	m.held, m.head = nil, nil
}

// engineMessage is what the stream carried when the wrapper never ran:
// the engine's explanation. Only once the stream has ended.
func (m *marker) engineMessage() string {
	if m.done {
		return ""
	}
	msg := strings.TrimSpace(string(m.held) + " " + string(m.head))
	if len(msg) > 1024 {
		msg = msg[:1024] + "..."
	}
	return msg
}

func (m *marker) state() markerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.notFound:
		return markerNotFound
	case m.seen:
		return markerPID
	}
	return markerNone
}
