// Package supervisor contains everything a command starts: a command
// run under it cannot leave anything running behind it, however it
// daemonizes, nor outlive its host, even one that is SIGKILLed.
//
// The supervisor is the host's own binary, started again under the name
// Name, so a program can contain what it starts with no helper binary to
// install. Only a program that asks is started so: its main calls Init
// first thing, which turns a process started as a supervisor into one
// and never returns there, and otherwise records that the program may be
// started again and returns. Package shell starts no supervisor and no
// cgroup keeper (package keeper, which becomes one from its own
// initialiser) for a program that did not call it: linking this package
// takes over no program's main. A supervisor runs the program's package
// initializers before main reaches Init: they add to the cost of every
// call under a supervisor.
//
// The supervisor runs the command as its child, in the supervisor's own
// process group (whose ID the host knows before the command runs, so
// that it can kill the group even when the supervisor dies before its
// first report), and is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever
// the command starts, however it leaves its parent and its group
// (setsid, a double fork), stays below the supervisor, which finds all
// of it by walking /proc and kills it. It reads one-byte orders from
// fd 3 and reports on fd 4:
//
//	fd 3, from the host: OrderTerm sends SIGTERM to every descendant,
//	      OrderKill freezes and kills them all; end of file (the host is
//	      gone, SIGKILL included) kills them all.
//	fd 4, to the host: "ok PID\n" once the command runs, or "err ERRNO
//	      MSG\n" if it could not start (ERRNO 0 when the failure is no
//	      system call's); then, once the command has exited and nothing
//	      it started is left, "exit N\n" or "signal N\n".
//
// Signals sent to the supervisor itself are passed to every
// descendant, as an init passes them on.
//
// What still escapes: a process the command has another service start
// for it (systemd-run, a container engine, cron), and everything, once
// the supervisor itself is SIGKILLed (which the command, as the same
// user, can do: the host then kills the command's process group, but
// not what left it). A command that stops the supervisor instead
// (SIGSTOP, ptrace) leaves its orders unread, so a host does not rely on
// it for the final kill: KillTree kills a supervisor and its tree from
// outside, needing nothing of either.
package supervisor

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Name is argv[0] of a supervisor: the host starts its own binary
// (/proc/self/exe) as Name PATH ARGV0 ARGS...
const Name = "promptkit-sandbox-supervisor"

// NameAs is argv[0] of a supervisor that runs its command as another
// user: NameAs CREDENTIAL PATH ARGV0 ARGS..., CREDENTIAL as
// FormatCredential writes it. The supervisor keeps its own user.
const NameAs = "promptkit-sandbox-supervisor-as"

// The orders a host writes on fd 3.
const (
	OrderTerm = 'T'
	OrderKill = 'K'
)

// initialized is set by Init: this program dispatches on its argv[0],
// so it may start itself as a supervisor or a keeper.
var initialized atomic.Bool

// Init lets this program contain what it starts by starting itself again
// as a supervisor or a keeper. A program's main calls it first thing. In
// a process started as one, Init does that work and exits: it never
// returns. In any other it records that the program can be started so,
// and returns.
//
// A program that never calls Init is never taken over, whatever its
// argv[0]: package shell does not start it again, and contains what it
// runs by its process group alone.
func Init() {
	if len(os.Args) >= 3 && os.Args[0] == Name {
		// syscall.Exit, not os.Exit: nothing of the program is to run at
		// exit, and a build with the race detector would wait a second
		// there for nothing.
		syscall.Exit(supervise(os.Args[1], os.Args[2:], nil))
	}
	if len(os.Args) >= 4 && os.Args[0] == NameAs {
		cred, err := ParseCredential(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, NameAs+":", err)
			syscall.Exit(125)
		}
		syscall.Exit(supervise(os.Args[2], os.Args[3:], cred))
	}
	initialized.Store(true)
}

// Initialized reports whether this program called Init, and so may start
// itself again as a supervisor or a keeper.
func Initialized() bool { return initialized.Load() }

// supervise runs path with argv (argv[0] included) to its end, and
// everything it started with it; as cred, when not nil.
func supervise(path string, argv []string, cred *syscall.Credential) int {
	ctl, status := os.NewFile(3, "control"), os.NewFile(4, "status")
	if ctl == nil || status == nil {
		fmt.Fprintln(os.Stderr, Name+": started without its control and status descriptors")
		return 125
	}
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	report := func(format string, args ...any) { _, _ = fmt.Fprintf(status, format+"\n", args...) }

	if err := setChildSubreaper(); err != nil {
		report("err 0 become a child subreaper: %v", err)
		return 125
	}
	// Handlers, not SIG_IGN: a handled signal is reset to its default in
	// the command, an ignored one would stay ignored there.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGWINCH)

	// The host started us leading a group of our own; the command joins
	// it. A command that kills us before we report has then still left
	// the host a group to kill.
	_ = syscall.Setpgid(0, 0)
	// #nosec G702 -- runs the command the host gave it: running the agent's commands, contained, is the supervisor's job
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pgid: syscall.Getpgrp(), Pdeathsig: syscall.SIGKILL, Credential: cred},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		report("err %d %v", int(errno), err)
		return 127
	}
	report("ok %d", pid)
	releaseStdio()

	s := &supervisor{self: os.Getpid()}
	go s.obey(ctl)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGPIPE {
				continue // ours alone: a write to a host that is gone
			}
			// Not to the group: we are in it, and would get it back.
			s.mu.Lock()
			descendants(s.self, sig.(syscall.Signal))
			s.mu.Unlock()
		}
	}()

	ws := s.reap(pid)
	switch {
	case ws.Signaled():
		report("signal %d", int(ws.Signal()))
	default:
		report("exit %d", ws.ExitStatus())
	}
	return 0
}

// releaseStdio points the supervisor's own stdio at /dev/null: the
// command has the streams, and a copy held here would keep them open
// after the command and everything it started are gone.
func releaseStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	for fd := range 3 {
		_ = syscall.Dup3(int(null.Fd()), fd, 0)
	}
}

type supervisor struct {
	self int
	mu   sync.Mutex // one walk of the tree at a time
}

// obey carries out the host's orders until the host is gone, and then
// kills everything.
func (s *supervisor) obey(ctl *os.File) {
	buf := make([]byte, 1)
	for {
		if _, err := ctl.Read(buf); err != nil {
			s.killAll()
			return
		}
		switch buf[0] {
		case OrderTerm:
			s.mu.Lock()
			descendants(s.self, syscall.SIGTERM)
			s.mu.Unlock()
		case OrderKill:
			s.killAll()
		}
	}
}

// killAll freezes the whole tree, then kills it, and says how many it
// found.
func (s *supervisor) killAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return killBelow(s.self)
}

// reap collects children until the command has exited and nothing is
// left below the supervisor, killing what the command left behind, and
// returns how the command ended.
func (s *supervisor) reap(pid int) syscall.WaitStatus {
	var status syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// ECHILD before the command's own exit cannot happen; treat
			// it as the end rather than spin.
			return status
		}
		if got == pid {
			status = ws
			break
		}
	}
	// Most commands leave nothing: then no child is left and no walk of
	// /proc is needed.
	for s.reapExited() {
		s.killAll()
		time.Sleep(2 * time.Millisecond) // SIGKILL takes effect asynchronously
	}
	return status
}

// reapExited reaps every child that has exited and reports whether any
// child is left.
func (s *supervisor) reapExited() bool {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return false // ECHILD: nothing left
		case got == 0:
			return true
		}
	}
}

// setChildSubreaper is prctl(PR_SET_CHILD_SUBREAPER, 1), by hand: the
// package keeps to the standard library's core, so that linking it, as
// every program that runs commands through shell does, adds nothing
// more.
func setChildSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}
