package execrelay

import (
	"errors"
	"os"
	"syscall"
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
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t))) // #nosec G103 -- TCGETS fills t, a Termios of the size it writes
	return errno == 0
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
	u := uint64(n) // #nosec G115 -- -n of a negative int fits in 64 bits unsigned
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
