package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
)

// unixPrefix marks an --addr that is a unix socket path: unix:/run/sandboxd/mcp.sock.
const unixPrefix = "unix:"

// socketMode is the mode of sandboxd's unix socket: its user only. A
// provider that forwards to it runs as the same user or as root (the
// docker plugin chowns the socket's directory to the container's user),
// so no group bit is needed, and anyone else who can reach the file must
// not get as far as the token check.
const socketMode = 0o600

// unixPath is the socket path of a unix: address, "" for any other.
func unixPath(addr string) string {
	if p, ok := strings.CutPrefix(addr, unixPrefix); ok {
		return p
	}
	return ""
}

// localAddr reports whether a listen address reaches only this machine:
// a loopback host:port or a unix socket. The Host check applies to both:
// a socket is reached through a loopback forwarder, where a rebound DNS
// name is the same threat as on a loopback port.
func localAddr(addr string) bool {
	return unixPath(addr) != "" || server.LoopbackAddr(addr)
}

// listen opens addr: TCP host:port, or unix:PATH. The socket has
// socketMode from the start (listenUnix); a stale socket left by a
// sandboxd that died is replaced, any other file in the way is an error.
func listen(addr string) (net.Listener, error) {
	path := unixPath(addr)
	if path == "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := listenUnix(path, socketMode)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// removeStaleSocket removes a socket at path that nothing listens on.
func removeStaleSocket(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listen on unix:%s: %w", path, err)
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("listen on unix:%s: a %v is in the way, not a socket", path, info.Mode().Type())
	}
	if c, err := net.Dial("unix", path); err == nil {
		_ = c.Close()
		return fmt.Errorf("listen on unix:%s: another process is listening there", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("listen on unix:%s: remove the stale socket: %w", path, err)
	}
	return nil
}

// listenURL is how announce names the listener: http://HOST:PORT, or
// unix:PATH for a socket (whose clients send Host: localhost).
func listenURL(ln net.Listener) string {
	if ln.Addr().Network() == "unix" {
		return unixPrefix + ln.Addr().String()
	}
	return "http://" + ln.Addr().String()
}
