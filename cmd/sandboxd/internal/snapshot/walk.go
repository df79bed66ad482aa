package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/dirent"
)

// Skipped is a path a snapshot left out, and why.
type Skipped struct {
	Path   string
	Reason string
}

// entry is a file or symlink a walk read: its path (relative,
// slash-separated), git mode and blob.
type entry struct {
	path, mode, blob string
}

// scan is what a walk of the workspace found: the entries a snapshot
// holds and the paths it skips.
type scan struct {
	entries []entry
	skipped []Skipped
	held    int // how many of entries the index took
}

// maxPath is PATH_MAX: git cannot hold a longer path.
const maxPath = 4096

// isGitDir reports whether a path component is one git keeps for itself
// (it refuses ".git" in any case).
func isGitDir(name string) bool { return strings.EqualFold(name, ".git") }

// reasonChanged is why a path that changed under the walk is left out.
const reasonChanged = "it changed while the snapshot was taken"

// walk reads the workspace's regular files and symlinks into the store,
// without following a symlink or entering a .git. Each directory is
// opened from the one above with O_NOFOLLOW, each file read through a
// descriptor opened from its directory's with O_NOFOLLOW and checked to
// be the file the directory listed: a directory or file the agent swaps
// for a symlink mid-walk is never followed, so nothing outside the
// workspace gets into a snapshot (and from there, by a restore, into the
// agent's hands).
func (s *Store) walk() (scan, error) {
	root, err := unix.Open(s.workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return scan{}, fmt.Errorf("walk the workspace: %w", err)
	}
	defer unix.Close(root)
	var sc scan
	if err := s.walkDir(root, "", &sc); err != nil {
		return scan{}, fmt.Errorf("walk the workspace: %w", err)
	}
	slices.SortFunc(sc.entries, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return sc, nil
}

// walkDir walks the directory open as dirfd, at rel ("" for the root).
func (s *Store) walkDir(dirfd int, rel string, sc *scan) error {
	names, err := readNames(dirfd)
	if err != nil {
		sc.skipped = append(sc.skipped, Skipped{rel, "unreadable: " + unwrapPath(err)})
		return nil
	}
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if isGitDir(name) {
			continue
		}
		skip := func(reason string) { sc.skipped = append(sc.skipped, Skipped{p, reason}) }
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			skip("unreadable: " + err.Error())
			continue
		}
		if len(p) >= maxPath {
			skip := Skipped{p[:200] + "...", fmt.Sprintf("a path of %d bytes, over %d", len(p), maxPath-1)}
			sc.skipped = append(sc.skipped, skip)
			continue
		}
		var e entry
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			fd, err := openChecked(dirfd, name, unix.O_DIRECTORY, &st)
			if err != nil {
				skip(err.Error())
				continue
			}
			if s.hidden(&st) {
				_ = unix.Close(fd)
				skip("the agent's user may not read it")
				continue
			}
			err = s.walkDir(fd, p, sc)
			_ = unix.Close(fd)
			if err != nil {
				return err
			}
			continue
		case unix.S_IFLNK:
			target, err := readlink(dirfd, name)
			if err != nil {
				skip(err.Error())
				continue
			}
			// git holds no symlink named .gitmodules.
			if strings.EqualFold(name, ".gitmodules") {
				skip("a path git refuses")
				continue
			}
			blob, err := s.writeBlob([]byte(target))
			if err != nil {
				return err
			}
			e = entry{p, "120000", blob}
		case unix.S_IFREG:
			if s.hidden(&st) {
				skip("the agent's user may not read it")
				continue
			}
			if st.Size > s.opts.MaxFileSize {
				skip(fmt.Sprintf("%d bytes, over the %d-byte cap", st.Size, s.opts.MaxFileSize))
				continue
			}
			if perm := os.FileMode(st.Mode).Perm(); perm&0o444 == 0 {
				skip("not readable (mode " + perm.String() + ")")
				continue
			}
			blob, reason, err := s.fileBlob(dirfd, name, p, &st)
			if err != nil {
				return err
			}
			if reason != "" {
				skip(reason)
				continue
			}
			mode := "100644"
			if st.Mode&0o100 != 0 {
				mode = "100755"
			}
			e = entry{p, mode, blob}
		default:
			skip("not a regular file or symlink")
			continue
		}
		if len(sc.entries) >= s.opts.MaxFiles {
			return fmt.Errorf("the workspace has more than %d files", s.opts.MaxFiles)
		}
		sc.entries = append(sc.entries, e)
	}
	return nil
}

// readNames is the names in the directory open as dirfd, sorted.
func readNames(dirfd int) ([]string, error) {
	fd, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// openChecked opens name in dirfd without following a symlink (and
// without blocking on a FIFO), and checks it is still what st, its
// lstat, describes; st becomes the descriptor's own stat.
func openChecked(dirfd int, name string, flags int, st *unix.Stat_t) (int, error) {
	fd, err := dirent.Open(dirfd, name, unix.O_RDONLY|flags)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT) {
		return -1, errors.New(reasonChanged)
	}
	if err != nil {
		return -1, fmt.Errorf("unreadable: %w", err)
	}
	got, err := dirent.Check(fd, dirent.Want{Like: st})
	if errors.Is(err, dirent.ErrChanged) {
		_ = unix.Close(fd)
		return -1, errors.New(reasonChanged)
	}
	if err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("unreadable: %w", err)
	}
	*st = got
	return fd, nil
}

// readlink is the target of the symlink name in dirfd.
func readlink(dirfd int, name string) (string, error) {
	for size := 256; size <= maxPath*2; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return "", errors.New(reasonChanged)
		}
		if err != nil {
			return "", fmt.Errorf("unreadable: %w", err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
	return "", errors.New("unreadable: its target is too long")
}

// cached is what the walk last read of a file: its blob, and the stat
// data that says whether it may have changed since.
type cached struct {
	dev, ino     uint64 // as wide as any platform's stat fields
	size         int64
	mode         uint32
	mtime, ctime unix.Timespec
	blob         string
}

// racyWindow is how much older than the read a file's change time must
// be for its blob to be reused: a change within the file system's
// timestamp granularity of the one read could leave the times as they
// were.
const racyWindow = time.Second

// fileBlob is the blob of the regular file name in dirfd (lstat st, at
// path p), from the cache when its stat data is as it was when read,
// else read now through a checked descriptor and written to the store.
// A reason, when set, is why it is left out.
func (s *Store) fileBlob(dirfd int, name, p string, st *unix.Stat_t) (blob, reason string, err error) {
	if c, ok := s.cache[p]; ok && c.dev == uint64(st.Dev) && c.ino == uint64(st.Ino) && c.size == st.Size &&
		c.mode == st.Mode && c.mtime == st.Mtim && c.ctime == st.Ctim {
		return c.blob, "", nil
	}
	start := time.Now()
	fd, oerr := openChecked(dirfd, name, 0, st)
	if oerr != nil {
		return "", oerr.Error(), nil
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	// What the descriptor is, not what the name was: a hard link to a
	// file the owner may not read shows here too.
	if s.hidden(st) {
		return "", "the agent's user may not read it", nil
	}
	content, rerr := io.ReadAll(io.LimitReader(f, s.opts.MaxFileSize+1))
	if rerr != nil {
		return "", "unreadable: " + unwrapPath(rerr), nil
	}
	if int64(len(content)) > s.opts.MaxFileSize {
		return "", fmt.Sprintf("over the %d-byte cap", s.opts.MaxFileSize), nil
	}
	if blob, err = s.writeBlob(content); err != nil {
		return "", "", err
	}
	delete(s.cache, p)
	if time.Unix(st.Ctim.Unix()).Before(start.Add(-racyWindow)) && int64(len(content)) == st.Size {
		s.cache[p] = cached{uint64(st.Dev), uint64(st.Ino), st.Size, st.Mode, st.Mtim, st.Ctim, blob}
	}
	return blob, "", nil
}

// hidden reports whether the workspace's owner (Options.Owner) may not
// read the file or directory st describes, when sandboxd runs as root:
// a snapshot root took of it would otherwise let the agent read it once
// restored (a hard link to a root-only file, a root-only directory
// renamed away and brought back). Supplementary groups are not
// consulted, so this errs on the side of leaving files out.
func (s *Store) hidden(st *unix.Stat_t) bool {
	o := s.opts.Owner
	if o == nil || s.euid != 0 || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return false
	}
	var need uint32 = 0o4 // read
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		need = 0o5 // read and search
	}
	perm := st.Mode & 0o777
	switch {
	case o.UID == 0:
		return false
	case int(st.Uid) == o.UID:
		perm >>= 6
	case int(st.Gid) == o.GID:
		perm >>= 3
	}
	return perm&need != need
}

// unwrapPath is err's message without the absolute path fs errors
// carry: results name paths relative to the workspace.
func unwrapPath(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
