package tether

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Flag, as the first argument, makes the plugin's binary run as the
// tether; the hook's command line follows it. The version is in the
// name: a tether of another protocol does not take it for its own.
const Flag = "--promptkit-sandbox-tether-v1"

// Hello is what the tether writes to stderr first, before the hook
// exists, so it is the first thing on the container's stderr.
const Hello = "promptkit-sandbox tether v1\n"

// FailurePrefix starts the line the tether writes to stderr when it
// cannot execute the hook's command: the prefix, "exec COMMAND failed:
// REASON", a newline.
const FailurePrefix = "[FATAL promptkit-sandbox tether] "

// Exit statuses of the tether itself.
const (
	// ExitNotFound: the command was not found.
	ExitNotFound = 127
	// ExitCannotRun: the command was found but could not be executed.
	ExitCannotRun = 126
	// ExitPluginGone: the plugin went away; the hook was killed.
	ExitPluginGone = 128 + int(syscall.SIGKILL)
)

// HeaderSize is the size of a frame's header.
const HeaderSize = 8

// Header is the header of a frame of n bytes of stdin.
func Header(n int) []byte {
	var h [HeaderSize]byte
	binary.BigEndian.PutUint64(h[:], uint64(n)) // #nosec G115 -- n is len(stdin), never negative
	return h[:]
}

// Invoked reports whether args (os.Args) ask for the tether.
func Invoked(args []string) bool { return len(args) >= 3 && args[1] == Flag }

// forwarded are the signals passed on to the hook: what a container is
// sent (docker stop, docker kill -s) and what a terminal sends.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// Main runs the tether on the process's stdin, stdout and stderr for the
// command line in args[2:] (args is os.Args) and returns its exit status.
// A plugin's main calls it first thing when Invoked.
func Main(args []string) int {
	// Threads count against the container's pids limit, which is the
	// hook's: one P is all the tether needs.
	runtime.GOMAXPROCS(1)
	_, _ = os.Stderr.WriteString(Hello)
	argv := args[2:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(argv[0], err)
	}
	stdin, feedW, err := os.Pipe()
	if err != nil {
		return fail(argv[0], err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	// The hook starts with default dispositions for what we catch (exec
	// resets handlers) and its own pipe as stdin.
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Files: []*os.File{stdin, os.Stdout, os.Stderr}, Env: os.Environ()})
	_ = stdin.Close()
	if err != nil {
		return fail(argv[0], err)
	}
	go func() {
		for s := range sigs {
			_ = proc.Signal(s)
		}
	}()
	go feed(os.Stdin, feedW)
	go func() {
		if !hungUp(syscall.Stdin) {
			return
		}
		// The plugin is gone: nothing may run on. Our exit ends the
		// container: the init exits with its only child, and the
		// kernel kills what is left in the container's PID namespace.
		_ = proc.Kill()
		os.Exit(ExitPluginGone)
	}()
	return wait(proc.Pid)
}

// fail reports a command that cannot run, as the engine's init does.
func fail(command string, err error) int {
	reason := err.Error()
	var errno syscall.Errno
	switch {
	case errors.Is(err, exec.ErrNotFound):
		reason = "executable file not found in $PATH"
	case errors.As(err, &errno):
		reason = errno.Error()
	}
	fmt.Fprintf(os.Stderr, "%sexec %s failed: %s\n", FailurePrefix, command, reason)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return ExitNotFound
	}
	return ExitCannotRun
}

// feed copies the frame of stdin to the hook and closes the hook's
// stdin. A hook that reads no stdin blocks it, and only it: the plugin's
// end is watched apart (watch).
func feed(r io.Reader, w *os.File) {
	defer w.Close()
	var h [HeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return
	}
	n := binary.BigEndian.Uint64(h[:])
	if n > math.MaxInt64 {
		return // no plugin sends one: Header takes an int
	}
	_, _ = io.CopyN(w, r, int64(n))
}

// hungUp returns true when fd, the container's stdin, hangs up: the
// engine has closed it because the plugin's attach connection is gone.
// It polls for nothing but the hang-up (POLLHUP and POLLERR are reported
// whatever events asks for), so it neither reads the frame nor waits for
// it to be read. It returns false when fd cannot be watched (there is no
// stdin): then nothing ties the hook to anyone.
func hungUp(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd)}} // #nosec G115 -- fd is a file descriptor, a C int
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return false
		}
		switch {
		case fds[0].Revents&unix.POLLNVAL != 0:
			return false
		case fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0:
			return true
		}
	}
}

// wait waits for the hook and returns its exit status.
func wait(pid int) int {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%swait for the command: %v\n", FailurePrefix, err)
			return ExitCannotRun
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
