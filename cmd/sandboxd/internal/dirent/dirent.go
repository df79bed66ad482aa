package dirent

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrChanged is the error for a descriptor that is not the entry wanted:
// another type, another file, a second link, another owner.
var ErrChanged = errors.New("not the entry expected")

// Open opens name, one entry of the directory dirfd, with flags (the
// access mode, O_DIRECTORY), adding O_NOFOLLOW (a symlink is ELOOP, never
// followed), O_NONBLOCK (a FIFO opens at once rather than waiting for a
// writer), O_NOCTTY and O_CLOEXEC. A name that is not a single entry
// below dirfd ("", ".", "..", or one with a "/", whose earlier
// components the open would follow links in) is refused without an
// open. An error from the open is the kernel's, unwrapped, for
// errors.Is and for the caller's message.
func Open(dirfd int, name string, flags int) (int, error) {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return -1, fmt.Errorf("%q is not the name of an entry in a directory", name)
	}
	return unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

// Want is what a descriptor must be; a zero field asks nothing.
type Want struct {
	// Type is the file type (unix.S_IFREG, unix.S_IFDIR, ...).
	Type uint32
	// Like is a stat of the entry as listed (an lstat beside it, or the
	// fstat of the file when it was made): the descriptor must be the
	// same file, by device and inode, and of the same type.
	Like *unix.Stat_t
	// OneLink asks a regular file to have exactly one link: a second
	// name may be outside the tree (a file the agent's user may not read,
	// hard-linked in), or let the file be changed from there.
	OneLink bool
	// Owner, when set, is the UID that must own the file.
	Owner *uint32
}

// Check is the fstat of fd, and ErrChanged with it when fd is not what
// want describes. An fstat that fails is the kernel's error, unwrapped.
func Check(fd int, want Want) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, err
	}
	typ := st.Mode & unix.S_IFMT
	switch {
	case want.Type != 0 && typ != want.Type,
		want.Like != nil && (st.Dev != want.Like.Dev || st.Ino != want.Like.Ino || typ != want.Like.Mode&unix.S_IFMT),
		want.OneLink && typ == unix.S_IFREG && st.Nlink != 1,
		want.Owner != nil && st.Uid != *want.Owner:
		return st, ErrChanged
	}
	return st, nil
}
