package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Stater reads what Glob and search_code need of the files rg listed —
// type, size, modification time — and watches their directories, without
// following a symlink anywhere in their paths. rg lists a file from a
// directory it walked; by the time the file is stat'ed, the agent may
// have swapped that directory for a symlink to one it may not read, and
// sandboxd (root, with --run-as) would stat through it. So each
// directory is opened beneath the workspace with openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) and the files are stat'ed
// relative to it, and a watch is put on the directory opened, not on
// whatever its path names by then. Consecutive files of one directory
// share its opening.
//
// A path through a symlink that stays inside the workspace (a link given
// as Glob's path), or a kernel without openat2, is stat'ed through the
// workspace's os.Root instead, which follows links only inside; its
// directory is not watched.
//
// A Stater is for one goroutine at a time; Close releases it.
type Stater struct {
	s      *Searcher
	root   *os.File // the workspace directory
	prefix string   // what the workspace's paths start with
	dir    string   // the directory fd is open on, relative to the root
	fd     int      // -1: none
}

// FileStat is what a Stater reads of a file.
type FileStat struct {
	Mode  fs.FileMode // the type bits alone
	Size  int64
	Mtime int64 // UnixNano
}

// NewStater returns a Stater for paths under the workspace directory.
func (s *Searcher) NewStater() (*Stater, error) {
	root, err := s.ws.Root().Open(".")
	if err != nil {
		return nil, fmt.Errorf("opening the workspace: %w", err)
	}
	return &Stater{s: s, root: root, prefix: s.ws.Dir() + "/", fd: -1}, nil
}

// Close releases what st holds.
func (st *Stater) Close() {
	st.closeDir()
	_ = st.root.Close()
}

func (st *Stater) closeDir() {
	if st.fd >= 0 {
		_ = unix.Close(st.fd)
	}
	st.dir, st.fd = "", -1
}

// errThroughLink: a path goes through a symlink, so openat2 would not
// open it; the os.Root fallback judges where the link leads.
var errThroughLink = errors.New("through a symlink")

// open opens rel's directory (the root for "."), and returns it with
// rel's last name in it.
func (st *Stater) open(path string) (fd int, name string, err error) {
	var rel string
	switch {
	case path == st.prefix[:len(st.prefix)-1]:
		rel = "."
	case strings.HasPrefix(path, st.prefix):
		rel = path[len(st.prefix):]
	default:
		return -1, "", fmt.Errorf("%s is not under the workspace %s", path, st.prefix)
	}
	if rel == "." {
		return int(st.root.Fd()), "", nil
	}
	dir, name := filepath.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return int(st.root.Fd()), name, nil
	}
	if st.fd < 0 || dir != st.dir {
		st.closeDir()
		fd, err := unix.Openat2(int(st.root.Fd()), dir, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// A symlink on the way (NO_SYMLINKS refuses even one that
			// stays inside), or no openat2 (EPERM: a seccomp filter).
			return -1, "", errThroughLink
		case err != nil:
			return -1, "", err
		}
		st.dir, st.fd = dir, fd
	}
	return st.fd, name, nil
}

// Lstat describes the file at path, an absolute path under the
// workspace directory; a symlink in its last name is described itself.
func (st *Stater) Lstat(path string) (FileStat, error) {
	fd, name, err := st.open(path)
	if errors.Is(err, errThroughLink) {
		fi, err := st.s.ws.Lstat(path)
		if err != nil {
			return FileStat{}, err
		}
		return FileStat{Mode: fi.Mode().Type(), Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}, nil
	}
	if err != nil {
		return FileStat{}, err
	}
	flags := unix.AT_SYMLINK_NOFOLLOW | unix.AT_STATX_DONT_SYNC
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	// statx asks for three fields, and DONT_SYNC spares network file
	// systems a round trip.
	var sx unix.Statx_t
	if err := unix.Statx(fd, name, flags, unix.STATX_TYPE|unix.STATX_SIZE|unix.STATX_MTIME, &sx); err != nil {
		return FileStat{}, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	// #nosec G115 -- a file size, which the kernel keeps below 2^63 (loff_t)
	return FileStat{Mode: fileType(sx.Mode), Size: int64(sx.Size), Mtime: sx.Mtime.Sec*1e9 + int64(sx.Mtime.Nsec)}, nil
}

// fileType is a stat mode's file type as an fs.FileMode.
func fileType(mode uint16) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// WatchDir makes w watch the directory holding path, the one Lstat
// stats path in, and reports whether it does. Call it before Lstat, so a
// change after the stat is reported.
func (st *Stater) WatchDir(w *DirWatcher, path string) bool {
	dir := filepath.Dir(path)
	if known, ok := w.known(dir); known {
		return ok
	}
	fd, name, err := st.open(path)
	if err != nil || name == "" {
		return false // through a link, or path is the workspace itself
	}
	// The watch goes on what fd is: /proc/self/fd/N leads to it, not to
	// whatever dir names now.
	return w.watch(dir, "/proc/self/fd/"+strconv.Itoa(fd))
}
