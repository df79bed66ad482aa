package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// listenUnix makes a unix socket at path that has mode from the moment
// anyone can reach it: it is bound in a fresh 0700 directory beside
// path, given its mode there, and renamed into place. Setting the
// umask around the bind instead would be process-wide: it reached the
// directories the Go build cache seed was making meanwhile, which came
// out 0600, so that no go command could write its cache again.
func listenUnix(path string, mode os.FileMode) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".sock-")
	if err != nil {
		return nil, err
	}
	// Empty once the socket is moved out.
	defer func() { _ = os.RemoveAll(dir) }()
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The name the listener would unlink on Close is tmp's; placedSocket
	// removes the socket where it ends up.
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, mode); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("socket mode: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("move the socket into place: %w", err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return &placedSocket{UnixListener: ln, path: path, file: info}, nil
}

// placedSocket is a listener whose socket file was renamed after the
// bind: it names the socket by where it is, and removes that file on
// Close unless another socket has replaced it.
type placedSocket struct {
	*net.UnixListener
	path string
	file os.FileInfo
}

func (l *placedSocket) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *placedSocket) Close() error {
	err := l.UnixListener.Close()
	if info, serr := os.Lstat(l.path); serr == nil && os.SameFile(info, l.file) {
		_ = os.Remove(l.path)
	}
	return err
}
