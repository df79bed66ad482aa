package execrelay

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// EnvSocket names the socket exec looks for a serve on, and serve
// listens on, when --socket is not given.
const EnvSocket = "PROMPTKIT_SANDBOX_SOCKET"

// Socket is the socket serve listens on and exec dials: flagValue
// (--socket), else $PROMPTKIT_SANDBOX_SOCKET, else DefaultSocket.
// explicit is false for the default only, where exec runs cold when
// nothing answers.
func Socket(flagValue string, getenv func(string) string) (path string, explicit bool) {
	if flagValue != "" {
		return flagValue, true
	}
	if v := getenv(EnvSocket); v != "" {
		return v, true
	}
	return DefaultSocket(getenv), false
}

// DefaultSocket is $XDG_RUNTIME_DIR/promptkit-sandbox/serve.sock, the
// per-user runtime directory, or /tmp/promptkit-sandbox-UID/serve.sock
// where there is none. /tmp is written out, not $TMPDIR: exec, started
// by PromptKit, and serve, started by hand or a service manager, must
// agree without sharing an environment.
func DefaultSocket(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && d[0] == '/' {
		return trimSlash(d) + "/promptkit-sandbox/serve.sock"
	}
	return "/tmp/promptkit-sandbox-" + itoa(os.Getuid()) + "/serve.sock"
}

// ErrNoServe is a socket nothing listens on: no file, or a stale one.
var ErrNoServe = errors.New("no serve is listening")

// PeerError is a serve whose process runs as another user: whoever owns
// the other end would receive exec's stdin and answer for its command.
type PeerError struct {
	UID, Want int
}

func (e *PeerError) Error() string {
	return "peer runs as uid " + itoa(e.UID) + ", not as this user (uid " + itoa(e.Want) + ")"
}

// PeerUID is the user of the process at the other end of the unix
// socket fd, as the kernel recorded it at connect (SO_PEERCRED).
func PeerUID(fd int) (int, error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0, &os.SyscallError{Syscall: "getsockopt SO_PEERCRED", Err: err}
	}
	return int(cred.Uid), nil
}

// IsTerminal reports whether fd is a terminal: a device that answers
// the terminal ioctl, as isatty(3) asks, not any character device.
func IsTerminal(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// dial connects to the serve at path by deadline, and checks that it
// runs as our user. The connection is non-blocking, so its reads and
// writes take deadlines. Nothing listening is ErrNoServe.
func dial(path string, deadline time.Time) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "socket", Err: err}
	}
	sa := &syscall.SockaddrUnix{Name: path}
	for {
		err = syscall.Connect(fd, sa)
		// A serve's backlog is full: it accepts again in a moment,
		// unless it has stopped, which the deadline finds.
		if err != syscall.EAGAIN || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	switch {
	case err == syscall.ENOENT || err == syscall.ECONNREFUSED:
		_ = syscall.Close(fd)
		return nil, ErrNoServe
	case err == syscall.EAGAIN:
		_ = syscall.Close(fd)
		return nil, os.ErrDeadlineExceeded
	case err != nil:
		_ = syscall.Close(fd)
		return nil, &os.SyscallError{Syscall: "connect", Err: err}
	}
	uid, err := PeerUID(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	if want := os.Getuid(); uid != want {
		_ = syscall.Close(fd)
		return nil, &PeerError{UID: uid, Want: want}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func trimSlash(s string) string {
	for len(s) > 1 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// itoa is strconv.Itoa, which this package may not import (see the
// package's doc).
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	var b [20]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
