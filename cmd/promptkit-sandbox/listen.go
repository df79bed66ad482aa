package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// listenServe makes serve's socket at path: in a directory only this user
// can write (made 0700 when missing), the socket itself 0600, accepting
// only connections from processes of this user. A socket another serve
// answers on is refused; one nothing answers on, left by a serve that
// died, is replaced.
func listenServe(path string, log hclog.Logger) (net.Listener, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := clearStale(path, log); err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The directory keeps others out already; the mode says so to anyone
	// who looks, and holds if the directory is ever opened up.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = lis.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return &peerListener{Listener: lis, uid: os.Getuid(), log: log}, nil
}

// privateDir makes dir 0700 if it is missing, and otherwise insists it is
// a directory of this user's that nobody else can write: one in /tmp made
// by another user could hand our socket's name to them.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory (a symlink?)", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("socket directory %s is not owned by this user (uid %d)", dir, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("socket directory %s is writable by group or others (mode %04o): use a directory only this user can write", dir, fi.Mode().Perm())
	}
	return nil
}

// errServeRunning is a socket another serve is answering on.
var errServeRunning = errors.New("another serve is listening")

// clearStale removes a socket at path that nothing answers on, and
// refuses one that something does answer on, or a file that is no socket.
func clearStale(path string, log hclog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket: not replacing it", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("%w on %s: stop it first, or give this one another --socket", errServeRunning, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	log.Info("removing a stale socket left by a serve that is gone", "socket", path)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}

// peerListener accepts connections from processes of one user only; the
// others are closed at once, before a byte is read from them.
type peerListener struct {
	net.Listener
	uid int
	log hclog.Logger
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.log.Warn("refused a connection not from this user", "peer_uid", uid, "error", err)
		_ = c.Close()
	}
}
