package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// envServeSocket names the socket exec looks for a serve on, and serve
// listens on, when --socket is not given.
const envServeSocket = "PROMPTKIT_SANDBOX_SOCKET"

// serveSocket is the socket serve listens on and exec dials: --socket,
// else $PROMPTKIT_SANDBOX_SOCKET, else the default. explicit is false for
// the default only, where exec runs cold when nothing answers.
func serveSocket(flagValue string) (path string, explicit bool) {
	if flagValue != "" {
		return flagValue, true
	}
	if v := os.Getenv(envServeSocket); v != "" {
		return v, true
	}
	return defaultSocket(), false
}

// defaultSocket is $XDG_RUNTIME_DIR/promptkit-sandbox/serve.sock, the
// per-user runtime directory, or /tmp/promptkit-sandbox-UID/serve.sock
// where there is none. /tmp is written out, not $TMPDIR: exec, started by
// PromptKit, and serve, started by hand or a service manager, must agree
// without sharing an environment.
func defaultSocket() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "promptkit-sandbox", "serve.sock")
	}
	return filepath.Join("/tmp", "promptkit-sandbox-"+strconv.Itoa(os.Getuid()), "serve.sock")
}

// dialTimeout bounds connecting to a serve: a live one accepts at once.
const dialTimeout = 5 * time.Second

// errNoServe is a socket nothing listens on: no file, or a stale one.
var errNoServe = errors.New("no serve is listening")

// dialServe connects to the serve at path and checks it runs as our user:
// whoever owns the other end receives the call's stdin and answers for the
// command. Nothing listening is errNoServe.
func dialServe(ctx context.Context, path string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w on %s", errNoServe, path)
		}
		return nil, fmt.Errorf("connect to serve on %s: %w", path, err)
	}
	if err := checkPeer(c); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("serve on %s: %w", path, err)
	}
	return c, nil
}

// checkPeer refuses a connection whose other end runs as another user.
func checkPeer(c net.Conn) error {
	uid, err := peerUID(c)
	if err != nil {
		return err
	}
	if want := os.Getuid(); uid != want {
		return fmt.Errorf("peer runs as uid %d, not as this user (uid %d)", uid, want)
	}
	return nil
}

// peerUID is the user of the process at the other end of a unix socket
// connection, as the kernel recorded it at connect (SO_PEERCRED).
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer credentials: %T is not a unix socket connection", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return 0, fmt.Errorf("peer credentials: %w", credErr)
	}
	return int(cred.Uid), nil
}
