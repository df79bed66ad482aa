package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"
)

// SHA256 returns the hex SHA-256 of the file at path. It streams the file:
// plugin binaries are tens of megabytes and are hashed on every launch.
//
// Only a regular file is read: the open does not wait (a FIFO named like
// a plugin would otherwise block it until someone writes), and what was
// opened is checked before a byte is read.
func SHA256(path string) (string, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return "", fmt.Errorf("hash plugin file: %w", err)
	}
	defer f.Close()
	return SHA256Of(f)
}

// SHA256Of hashes the rest of f, from its current offset: the hex
// SHA-256 of a plugin file already opened (see OpenRegular).
func SHA256Of(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash plugin file %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OpenRegular opens path for reading, following symlinks, and fails at
// once, without blocking, unless what it opened is a regular file. The
// descriptor is put back in blocking mode (for a regular file the flag
// changes nothing, but the caller gets an ordinary file).
func OpenRegular(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fileType(st.Mode))
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		_ = syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// fileType names the type in a stat mode, for messages.
func fileType(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFDIR:
		return "a directory"
	}
	return fmt.Sprintf("file type %#o", mode&syscall.S_IFMT)
}
