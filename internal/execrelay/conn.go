package execrelay

import (
	"io"
	"os"
	"syscall"
	"time"
)

// conn is exec's end of a relay connection: a blocking unix socket whose
// reads and writes are bounded by SO_RCVTIMEO and SO_SNDTIMEO, not by the
// runtime's poller. A process that makes one call has no use for the
// poller: its thread, its timers and the wake-ups between them cost exec
// more than the call's own reads and writes (99 context switches a call
// against 20 for the Go runtime's start alone).
type conn struct {
	fd int
}

// dial connects to the serve at path by deadline, and checks that it
// runs as our user. Nothing listening is ErrNoServe.
func dial(path string, deadline time.Time) (*conn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "socket", Err: err}
	}
	c := &conn{fd: fd}
	// A serve whose backlog is full (stopped, or swamped) keeps connect
	// waiting: the send timeout bounds that wait too.
	if err := c.setTimeout(syscall.SO_SNDTIMEO, time.Until(deadline)); err != nil {
		_ = c.Close()
		return nil, err
	}
	err = ignoringEINTR(func() error { return syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) })
	if err == syscall.EISCONN {
		// A connect retried after EINTR that had completed.
		err = nil
	}
	switch {
	case err == syscall.ENOENT || err == syscall.ECONNREFUSED:
		_ = c.Close()
		return nil, ErrNoServe
	case err == syscall.EAGAIN:
		_ = c.Close()
		return nil, os.ErrDeadlineExceeded
	case err != nil:
		_ = c.Close()
		return nil, &os.SyscallError{Syscall: "connect", Err: err}
	}
	uid, err := PeerUID(fd)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	if want := os.Getuid(); uid != want {
		_ = c.Close()
		return nil, &PeerError{UID: uid, Want: want}
	}
	return c, nil
}

// setTimeout sets the socket's receive or send timeout to d; zero or
// less is none. A d that has run out is the shortest timeout there is.
func (c *conn) setTimeout(opt int, d time.Duration) error {
	var tv syscall.Timeval
	if d > 0 {
		tv = syscall.NsecToTimeval(max(d.Nanoseconds(), int64(time.Microsecond)))
	}
	if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
		return &os.SyscallError{Syscall: "setsockopt", Err: err}
	}
	return nil
}

// until bounds both directions by deadline (zero: unbounded).
func (c *conn) until(deadline time.Time) {
	d := time.Duration(0)
	if !deadline.IsZero() {
		d = max(time.Until(deadline), time.Microsecond)
	}
	_ = c.setTimeout(syscall.SO_RCVTIMEO, d)
	_ = c.setTimeout(syscall.SO_SNDTIMEO, d)
}

// readUntil bounds reads by deadline.
func (c *conn) readUntil(deadline time.Time) {
	_ = c.setTimeout(syscall.SO_RCVTIMEO, max(time.Until(deadline), time.Microsecond))
}

// Read is read(2); a timeout is os.ErrDeadlineExceeded, the end io.EOF.
func (c *conn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, os.ErrDeadlineExceeded
		case err != nil:
			return 0, &os.SyscallError{Syscall: "read", Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p; a timeout is os.ErrDeadlineExceeded. A serve
// that has hung up is EPIPE, not SIGPIPE: Go leaves SIGPIPE on sockets
// unhandled.
func (c *conn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Write(c.fd, p[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return n, os.ErrDeadlineExceeded
		case err != nil:
			return n, &os.SyscallError{Syscall: "write", Err: err}
		}
		n += m
	}
	return n, nil
}

// hangUp ends the connection in both directions, which returns a read or
// write blocked on it, without closing the descriptor under it.
func (c *conn) hangUp() { _ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR) }

// Close closes the descriptor.
func (c *conn) Close() error { return syscall.Close(c.fd) }

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
