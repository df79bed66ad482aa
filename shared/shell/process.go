package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Process is a command started by Start. Wait collects it; Stop, Pid,
// Stdout and Stderr may be used from any goroutine while it runs.
type Process struct {
	cmd     *exec.Cmd
	pid     int          // the process we started and wait for: the command, or its supervisor
	sup     *supervision // set when a supervisor contains the process
	cg      *callCgroup  // set when a cgroup does
	command string
	opts    Options

	stdout, stderr *Output
	outR, errR     *os.File
	readersDone    chan struct{} // one value per finished reader

	stdinW    *os.File      // nil when Request.Stdin was empty
	stdinDone chan struct{} // closed when the stdin writer returns

	group  group
	exited chan struct{} // closed once the leader (command or supervisor) has exited, unreaped
	killed chan struct{} // closed once the host has SIGKILLed the call (group.killAll)

	waitOnce sync.Once
	resp     sandbox.Response
	err      error
}

// Start launches req in its own process group and returns once it runs.
// The timeout (Request.Timeout, else Options.Timeout) and ctx apply from
// then on. The caller must call Wait, which releases everything Start
// acquired, req.Stdin included.
//
// Errors are *sandbox.Error: KindStart when the process could not be
// started (empty command, not found, not executable, bad directory, bad
// bytes in an argument), KindTimeout or KindCanceled when ctx was already
// done.
func Start(ctx context.Context, req sandbox.Request, opts Options) (*Process, error) {
	if req.Command == "" {
		return nil, sandbox.NewError(sandbox.KindStart, "shell: empty command", nil)
	}
	if ctx.Err() != nil {
		return nil, sandbox.ContextError(ctx, describe(req.Command), 0)
	}
	opts = opts.withDefaults()
	p := &Process{
		command:     req.Command,
		opts:        opts,
		stdout:      opts.output(opts.StdoutSink),
		stderr:      opts.output(opts.StderrSink),
		readersDone: make(chan struct{}, 2),
		exited:      make(chan struct{}),
		killed:      make(chan struct{}),
	}
	if err := p.spawn(ctx, req); err != nil {
		return nil, err
	}
	p.group.arm(ctx, p, opts.timeoutFor(req))
	return p, nil
}

// spawn creates the pipes, starts the process and the goroutines that
// move bytes. The child gets the *os.File ends directly, so os/exec waits
// for the process only, never for our copies.
func (p *Process) spawn(ctx context.Context, req sandbox.Request) (err error) {
	var closeOnErr []*os.File
	defer func() {
		if err != nil {
			for _, f := range closeOnErr {
				_ = f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, sandbox.NewError(sandbox.KindStart, describe(p.command)+": create pipe", err)
		}
		closeOnErr = append(closeOnErr, r, w)
		return r, w, nil
	}

	cmd := exec.Command(req.Command, req.Args...)
	cmd.Dir = p.opts.Dir
	cmd.Env = processEnv(p.opts.CleanEnv, req.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: p.opts.Credential}

	var outW, errW, inR *os.File
	if p.outR, outW, err = pipe(); err != nil {
		return err
	}
	if p.errR, errW, err = pipe(); err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if len(req.Stdin) > 0 || p.opts.StdinReader != nil {
		if inR, p.stdinW, err = pipe(); err != nil {
			return err
		}
		cmd.Stdin = inR
	}

	childEnds := []*os.File{outW, errW, inR}
	if cmd.Err != nil {
		return sandbox.NewError(sandbox.KindStart, "start "+describe(p.command), cmd.Err)
	}
	ends, err := p.contain(cmd)
	if err != nil {
		return sandbox.NewError(sandbox.KindStart, "contain "+describe(p.command), err)
	}
	childEnds = append(childEnds, ends...)

	if p.opts.Isolated && IsolationAvailable() == nil {
		err = startIsolated(cmd, p.exited)
	} else {
		err = cmd.Start()
	}
	// The child has its copies; ours would keep the pipes open forever.
	for _, f := range childEnds {
		if f != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		p.release()
		return sandbox.NewError(sandbox.KindStart, "start "+describe(p.command), err)
	}
	p.cmd = cmd
	p.pid = cmd.Process.Pid
	go func() {
		waitExit(p.pid)
		close(p.exited)
	}()
	if p.sup != nil {
		if err := p.sup.started(ctx, p.pid, cmd.Args[1]); err != nil {
			// The supervisor exits on its own after a failed start, and
			// at once when its control pipe closes, unless the command,
			// which may well run, has stopped it: so it is killed.
			_ = p.sup.ctl.Close()
			p.sup.kill()
			_ = p.reap(p.exitWithin(reapWithin))
			p.release()
			if ctx.Err() != nil {
				return sandbox.ContextError(ctx, describe(p.command), 0)
			}
			return sandbox.NewError(sandbox.KindStart, "start "+describe(p.command), err)
		}
	}

	go p.capture(p.stdout, p.outR)
	go p.capture(p.stderr, p.errR)
	switch {
	case p.opts.StdinReader != nil:
		go p.stream(p.stdinW, p.opts.StdinReader)
		p.stdinW = nil // nothing for Wait to release: see stream
	case p.stdinW != nil:
		p.stdinDone = make(chan struct{})
		go p.feed(p.stdinW, req.Stdin)
	}
	return nil
}

func (p *Process) capture(o *Output, r *os.File) {
	// A read error can only be our own deadline (see collectOutput) or a
	// broken pipe; either way the stream is over.
	_, _ = o.ReadFrom(r)
	_ = r.Close()
	p.readersDone <- struct{}{}
}

func (p *Process) feed(w *os.File, data []byte) {
	// EPIPE means the process did not want (all of) its input, which is
	// its business, not a failure of the call.
	_, _ = w.Write(data)
	_ = w.Close()
	close(p.stdinDone)
}

// stream copies r to stdin as it comes. It may block in r long after the
// process is gone (a reader whose writer has nothing yet), so Wait does
// not wait for it: the process's exit shows at its next write.
func (p *Process) stream(w *os.File, r io.Reader) {
	_, _ = io.Copy(w, r)
	_ = w.Close()
}

// Pid returns the command's process ID: 0 for a supervised command
// whose supervisor was killed, or stopped, before it could say.
func (p *Process) Pid() int {
	if p.sup != nil {
		return p.sup.cmdPid
	}
	return p.pid
}

// Stdout is the process's standard output as captured so far.
func (p *Process) Stdout() *Output { return p.stdout }

// Stderr is the process's standard error as captured so far.
func (p *Process) Stderr() *Output { return p.stderr }

// Stop ends the process as a timeout would (SIGTERM to the group, SIGKILL
// after the grace); Wait then reports a KindCanceled error. Stopping a
// process that has already exited does nothing.
func (p *Process) Stop() {
	p.StopWith(sandbox.NewError(sandbox.KindCanceled, describe(p.command)+": stopped", nil))
}

// StopWith is Stop with the error Wait reports for it (a timeout enforced
// by the caller, say); the first cause of an end wins.
func (p *Process) StopWith(cause error) {
	p.group.terminate(cause)
}

// Wait waits for the process to exit, kills what it left in its group,
// collects its output and returns the result: nil for exit status zero,
// otherwise the typed error that Response.Err repeats. Output captured
// before a failure is returned with it. Wait may be called more than once
// and from several goroutines; all get the same result.
func (p *Process) Wait() (sandbox.Response, error) {
	p.waitOnce.Do(p.wait)
	return p.resp, p.err
}

func (p *Process) wait() {
	exited := p.awaitExit()
	cause := p.group.leaderExited()
	waitErr := p.reap(exited) // only now may the PID be recycled
	if p.sup != nil {
		p.sup.finish()
	}
	if p.cg != nil {
		p.cg.release()
	}

	p.releaseStdin()
	p.collectOutput()

	p.resp.Stdout, p.resp.StdoutTruncated = p.stdout.take()
	p.resp.Stderr, p.resp.StderrTruncated = p.stderr.take()
	p.err = p.result(cause, waitErr)
	p.resp.Err = p.err
}

// reapWithin bounds the wait for a leader the host has SIGKILLed. It is
// dead, or all but: only a tracer outside the call (one the walk did
// not find) can hold it, a zombie that tracer alone sees until it lets
// go, and the call does not wait for that.
const reapWithin = 2 * time.Second

// errNotReaped is Wait's error from cmd.Wait when the leader was left to
// be reaped later; the cause of the kill is what the call reports.
var errNotReaped = errors.New("killed, but not yet exited")

// awaitExit waits for the leader to exit, leaving it unreaped, and
// reports whether it did. Until the host kills the call, that is as long
// as the process runs; after, at most reapWithin.
func (p *Process) awaitExit() bool {
	select {
	case <-p.exited:
		return true
	case <-p.killed:
		return p.exitWithin(reapWithin)
	}
}

// exitWithin waits up to d for the leader to exit, leaving it unreaped.
func (p *Process) exitWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// reap reaps the leader when it has exited; otherwise it leaves that to
// a goroutine, which the leader's exit, whenever it comes, releases.
func (p *Process) reap(exited bool) error {
	if exited {
		return p.cmd.Wait()
	}
	go func() { _ = p.cmd.Wait() }()
	return errNotReaped
}

// waitExit blocks until the process has exited but leaves it unreaped, so
// its PID (and with it the process group ID) stays reserved while the rest
// of the group is killed. It returns how the process ended; a zero value
// when that could not be learned (cmd.Wait then reports the failure).
func waitExit(pid int) unix.Siginfo {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return info
		}
		if err != unix.EINTR {
			return unix.Siginfo{}
		}
	}
}

// releaseStdin stops feeding stdin: a process that exited reads no more,
// and a descendant outside the group must not keep Wait, or req.Stdin,
// hostage.
func (p *Process) releaseStdin() {
	if p.stdinW == nil {
		return
	}
	select {
	case <-p.stdinDone:
		return
	default:
	}
	if p.stdinW.SetWriteDeadline(time.Now()) != nil {
		_ = p.stdinW.Close()
	}
	<-p.stdinDone
}

// collectOutput waits for both readers. Once the group is dead, the pipes
// reach EOF at once; only a descendant that escaped the group can hold
// them, and it gets Options.OrphanWait before we stop reading. Output
// still waiting in a pipe when that time is up is not given up on: the
// reader is only behind (a busy machine, a slow sink), so the wait goes
// on, up to maxDrainWait in all, while a pipe holds unread bytes.
func (p *Process) collectOutput() {
	done := 0
	for done < 2 {
		select {
		case <-p.readersDone:
			done++
			continue
		default:
		}
		break
	}
	if done == 2 {
		return
	}
	expired := time.NewTimer(p.opts.OrphanWait)
	defer expired.Stop()
	giveUp := time.Now().Add(maxDrainWait)
	for done < 2 {
		select {
		case <-p.readersDone:
			done++
		case <-expired.C:
			if time.Now().Before(giveUp) && (unread(p.outR) || unread(p.errR)) {
				expired.Reset(p.opts.OrphanWait)
				continue
			}
			for _, r := range []*os.File{p.outR, p.errR} {
				if r.SetReadDeadline(time.Now()) != nil {
					_ = r.Close()
				}
			}
		}
	}
}

// maxDrainWait bounds how long collectOutput waits for readers that are
// behind; a descendant outside the group that keeps writing is cut off
// after it.
const maxDrainWait = 10 * time.Second

// unread reports whether bytes wait in the pipe r.
func unread(r *os.File) bool {
	rc, err := r.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	if rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) != nil {
		return false
	}
	return n > 0
}

func (p *Process) result(cause, waitErr error) error {
	if cause != nil {
		return cause
	}
	if p.sup != nil && p.sup.exited {
		if p.sup.ended == nil {
			return nil
		}
		return p.sup.ended
	}
	ps := p.cmd.ProcessState
	if ps == nil {
		return sandbox.NewError(sandbox.KindUnknown, describe(p.command)+": wait", waitErr)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		return &sandbox.ExitError{Code: 128 + int(sig), Signal: sig.String()}
	}
	if code := ps.ExitCode(); code != 0 {
		return &sandbox.ExitError{Code: code}
	}
	return nil
}

func describe(command string) string {
	return fmt.Sprintf("command %q", command)
}
