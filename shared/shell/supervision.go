package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// si_code values of a child's end (CLD_KILLED, CLD_DUMPED).
const (
	cldKilled = 2
	cldDumped = 3
)

// supervision is the host's end of a supervisor (package supervisor).
type supervision struct {
	ctl    *os.File // orders to the supervisor; closing it kills the tree
	status *os.File // the supervisor's reports
	lines  *bufio.Reader
	pgid   int // the supervisor's PID: the group it and the command are in
	cmdPid int // the command's PID; 0 if the supervisor died before saying
	ended  *sandbox.ExitError
	exited bool // the command's end was reported (ended nil: exit 0)
}

// selfExe is how a process names its own binary without trusting that
// the path it was started from still holds it.
const selfExe = "/proc/self/exe"

// startTimeout bounds the wait for a supervisor to report that the
// command runs, when the context has no sooner deadline: a supervisor
// is a fresh start of this binary, slow only on a machine under heavy
// load.
const startTimeout = 30 * time.Second

// superviseCmd turns cmd, resolved but not started, into the start of a
// supervisor that runs it. The returned files are the child's ends, to
// close once it has started.
func superviseCmd(cmd *exec.Cmd) (*supervision, []*os.File, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		_ = ctlR.Close()
		_ = ctlW.Close()
		return nil, nil, err
	}
	if cred := cmd.SysProcAttr.Credential; cred != nil {
		// The supervisor stays the host's user; the command becomes cred.
		cmd.Args = append([]string{supervisor.NameAs, supervisor.FormatCredential(cred), cmd.Path}, cmd.Args...)
	} else {
		cmd.Args = append([]string{supervisor.Name, cmd.Path}, cmd.Args...)
	}
	cmd.Path = selfExe
	cmd.ExtraFiles = []*os.File{ctlR, statusW}
	// The supervisor is not the command: no parent-death signal (the end
	// of fd 3 tells it the host is gone, and it then kills the tree).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &supervision{ctl: ctlW, status: statusR, lines: bufio.NewReaderSize(statusR, 512)},
		[]*os.File{ctlR, statusW}, nil
}

// started waits for the supervisor, started as pid, to say the command
// runs. An error is the command's failure to start, or the supervisor's;
// either way the supervisor is on its way out. A supervisor killed before
// its report is no failure to start: the command may well have run (and
// killed it), so the call goes on and ends as the kill, and finish
// kills the group. Nor is one stopped before its report: the command
// runs from the moment the supervisor forks it, and may stop it (the
// same user may), so the call goes on, the command's PID unknown, and
// ends as the host kills it.
func (s *supervision) started(ctx context.Context, pid int, path string) error {
	s.pgid = pid
	deadline := time.Now().Add(startTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	line, err := s.firstReport(ctx, pid, deadline)
	word, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	switch {
	case errors.Is(err, errStopped):
		return nil
	case err == nil && word == "ok":
		pid, perr := strconv.Atoi(rest)
		if perr != nil || pid <= 0 {
			return fmt.Errorf("supervisor: bad report %q", line)
		}
		s.cmdPid = pid
		return nil
	case err == nil && word == "err":
		n, msg, _ := strings.Cut(rest, " ")
		if errno, _ := strconv.Atoi(n); errno > 0 {
			return &os.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(errno)}
		}
		return errors.New(msg)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("supervisor: no word after %s", startTimeout)
	case err == io.EOF && killed(pid):
		return nil
	default:
		return fmt.Errorf("supervisor: exited before the command ran (%v)", err)
	}
}

// errStopped is firstReport's error for a supervisor that stopped
// before it reported.
var errStopped = errors.New("supervisor: stopped before its report")

// pollStopped is how often firstReport looks for a stopped supervisor
// while it waits: the report takes a start of this binary, a few
// milliseconds, so most starts never look.
const pollStopped = 10 * time.Millisecond

// firstReport reads the supervisor's first line, until deadline or the
// end of ctx, and returns errStopped if the supervisor is stopped
// (SIGSTOP or ptrace) before it writes one.
func (s *supervision) firstReport(ctx context.Context, pid int, deadline time.Time) (string, error) {
	defer func() { _ = s.status.SetReadDeadline(time.Time{}) }()
	var line string
	for {
		next := time.Now().Add(pollStopped)
		if next.After(deadline) {
			next = deadline
		}
		_ = s.status.SetReadDeadline(next)
		part, err := s.lines.ReadString('\n')
		line += part
		switch {
		case !errors.Is(err, os.ErrDeadlineExceeded), ctx.Err() != nil, !time.Now().Before(deadline):
			return line, err
		case supervisor.Stopped(pid):
			return line, errStopped
		}
	}
}

// order passes a signal for the tree to the supervisor.
func (s *supervision) order(sig syscall.Signal) {
	b := byte(supervisor.OrderKill)
	if sig == syscall.SIGTERM {
		b = supervisor.OrderTerm
	}
	// A failed write means the supervisor is gone, and with it the tree
	// (or the fallback in finish takes over).
	_, _ = s.ctl.Write([]byte{b})
}

// kill ends the supervisor and everything below it from the host, asking
// nothing of the supervisor: a command that runs as the host's user may
// have stopped it (SIGSTOP, a ptrace attach), and an order would then
// wait unread forever. The group goes too: it holds what the walk can no
// longer reach when the supervisor died earlier.
func (s *supervision) kill() {
	supervisor.KillTree(s.pgid)
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
}

// finish reads the supervisor's last report, after it has exited, and
// releases the host's ends. A supervisor that ended without one was
// killed (by the command, it may be, since both run as the same user):
// what it left is then out of its reach, so the command's process group,
// at least, is killed here.
func (s *supervision) finish() {
	// A supervisor that has exited has said all it will say; one that
	// has not (killed, but held by a tracer) must not hold us.
	_ = s.status.SetReadDeadline(time.Now().Add(reapWithin))
	line, err := s.lines.ReadString('\n')
	if strings.HasPrefix(line, "ok ") {
		// Written as the supervisor was stopped (see started), after the
		// start had gone on without it.
		line, err = s.lines.ReadString('\n')
	}
	_ = s.ctl.Close()
	_ = s.status.Close()
	word, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	n, nerr := strconv.Atoi(rest)
	switch {
	case err != nil && err != io.EOF, nerr != nil:
	case word == "exit":
		s.exited = true
		if n != 0 {
			s.ended = &sandbox.ExitError{Code: n}
		}
		return
	case word == "signal":
		s.exited = true
		s.ended = &sandbox.ExitError{Code: 128 + n, Signal: syscall.Signal(n).String()}
		return
	}
	// The supervisor is dead but unreaped, so its PID still names the
	// group.
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
}

// killed waits for the child pid to end, leaving it unreaped, and says
// whether a signal ended it.
func killed(pid int) bool {
	code := waitExit(pid).Code
	return code == cldKilled || code == cldDumped
}
