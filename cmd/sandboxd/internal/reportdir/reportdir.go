package reportdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/dirent"
)

// ErrReplaced is the error for a file that is no longer the one Dir.File
// made: a symlink, a hard link, another file renamed over it.
var ErrReplaced = errors.New("the file was replaced, not written in place")

// Dir is a directory of sandboxd's for files a tool writes as owner.
type Dir struct {
	path  string
	fd    int
	uid   int
	gid   int
	mu    sync.Mutex
	files map[string]*unix.Stat_t // as File made them
}

// New makes a fresh directory (named from prefix in the temporary
// directory) for files the user owner writes; nil is sandboxd's own
// user. Remove it when done.
func New(prefix string, owner *syscall.Credential) (*Dir, error) {
	path, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	d := &Dir{path: path, uid: os.Geteuid(), gid: os.Getegid(), files: map[string]*unix.Stat_t{}}
	if owner != nil {
		d.uid, d.gid = int(owner.Uid), int(owner.Gid)
		// Searchable, so the owner can open a file in it by name; not
		// readable or writable, so it can neither list nor change it.
		if err := os.Chmod(path, 0o711); err != nil { // #nosec G302 -- searchable, not listable or writable: the owner opens its report file by name (see above)
			_ = os.RemoveAll(path)
			return nil, fmt.Errorf("report directory: %w", err)
		}
	}
	if d.fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("report directory: %w", err)
	}
	return d, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// File makes the empty file name (mode 0600, the owner's) the tool is to
// write, and returns its path.
func (d *Dir) File(name string) (string, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return "", fmt.Errorf("report file %q: not a plain name", name)
	}
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", fmt.Errorf("report file %s: %w", name, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, d.uid, d.gid); err != nil {
		return "", fmt.Errorf("report file %s: %w", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("report file %s: %w", name, err)
	}
	d.mu.Lock()
	d.files[name] = &st
	d.mu.Unlock()
	return filepath.Join(d.path, name), nil
}

// Subdir makes the directory name, the owner's (mode 0700), for what the
// tool writes that sandboxd never reads back (a test binary); the owner
// may do what it likes in it.
func (d *Dir) Subdir(name string) (string, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return "", fmt.Errorf("report directory %q: not a plain name", name)
	}
	if err := unix.Mkdirat(d.fd, name, 0o700); err != nil {
		return "", fmt.Errorf("report directory %s: %w", name, err)
	}
	if err := unix.Fchownat(d.fd, name, d.uid, d.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", fmt.Errorf("report directory %s: %w", name, err)
	}
	return filepath.Join(d.path, name), nil
}

// Read is what the tool wrote to the file File made, at most limit bytes
// of it; nil when it wrote nothing. It is ErrReplaced when the name no
// longer holds that file, as it was made: never a link's target.
func (d *Dir) Read(name string, limit int64) ([]byte, error) {
	d.mu.Lock()
	made, ok := d.files[name]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("report file %s: not made here", name)
	}
	// Not through a link; a FIFO put in its place does not hang the open.
	fd, err := dirent.Open(d.fd, name, unix.O_RDONLY)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("report file %s: %w", name, ErrReplaced)
	}
	if err != nil {
		return nil, fmt.Errorf("report file %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.path, name))
	defer f.Close()
	owner := uint32(d.uid) // #nosec G115 -- d.uid is a uid_t: Geteuid's or a Stat_t's uint32 Uid
	_, err = dirent.Check(fd, dirent.Want{Type: unix.S_IFREG, Like: made, OneLink: true, Owner: &owner})
	if errors.Is(err, dirent.ErrChanged) {
		return nil, fmt.Errorf("report file %s: %w", name, ErrReplaced)
	}
	if err != nil {
		return nil, fmt.Errorf("report file %s: %w", name, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fmt.Errorf("report file %s: %w", name, err)
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// Remove removes the directory and everything in it.
func (d *Dir) Remove() error {
	_ = unix.Close(d.fd)
	return os.RemoveAll(d.path)
}
