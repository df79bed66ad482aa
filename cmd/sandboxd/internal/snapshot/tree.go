package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// tree changes files under the workspace without following a symlink:
// every directory on a path is opened with O_NOFOLLOW from the one above,
// starting at the workspace's own descriptor, so a symlink swapped in for
// a directory is refused rather than followed out.
type tree struct {
	root  int
	owner *Owner
}

func openTree(dir string, owner *Owner) (*tree, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	return &tree{root: fd, owner: owner}, nil
}

func (t *tree) close() { _ = unix.Close(t.root) }

// checkPath refuses a path a snapshot cannot hold: absolute, with empty,
// "." or ".." components, or through a .git.
func checkPath(rel string) ([]string, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || isGitDir(p) {
			return nil, fmt.Errorf("%q: not a path a snapshot may write", rel)
		}
	}
	return parts, nil
}

// dir opens the directory holding rel's last component, creating missing
// directories when create is set; it returns that descriptor and the
// last component.
func (t *tree) dir(rel string, create bool) (int, string, error) {
	parts, err := checkPath(rel)
	if err != nil {
		return -1, "", err
	}
	fd, err := unix.Dup(t.root)
	if err != nil {
		return -1, "", err
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, p, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				if err == nil {
					t.chown(fd, p)
				}
				next, err = unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		_ = unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, "", fmt.Errorf("%q: %q on its way is a symlink or a file, not a directory", rel, p)
		}
		if err != nil {
			return -1, "", fmt.Errorf("%q: %w", rel, err)
		}
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

// chown gives a new file or directory the configured owner (root only).
func (t *tree) chown(dirfd int, name string) {
	if t.owner != nil && os.Geteuid() == 0 {
		_ = unix.Fchownat(dirfd, name, t.owner.UID, t.owner.GID, unix.AT_SYMLINK_NOFOLLOW)
	}
}

// remove unlinks rel itself (a symlink, not its target). One already
// gone is fine.
func (t *tree) remove(rel string) error {
	fd, name, err := t.dir(rel, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Unlinkat(fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %q: %w", rel, err)
	}
	return nil
}

// removeEmptyDir removes the directory rel if it is empty, reporting
// whether it did.
func (t *tree) removeEmptyDir(rel string) bool {
	fd, name, err := t.dir(rel, false)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR) == nil
}

// write puts a file (mode 100644 or 100755) or a symlink (120000) with
// content at rel: made beside it under a temporary name, then renamed
// over whatever is there, so a symlink at rel is replaced, never written
// through. A replaced file keeps its owner and its permission bits but
// for the executable ones, which the snapshot sets.
func (t *tree) write(rel, mode string, content []byte) error {
	fd, name, err := t.dir(rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	old := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	if old && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil {
			return fmt.Errorf("write %q: a directory is in the way: %w", rel, err)
		}
		old = false
	}
	tmp := "." + name + ".snapshot-" + randomSuffix()
	if len(tmp) > 255 {
		tmp = ".snapshot-" + randomSuffix()
	}
	if mode == "120000" {
		if err := unix.Symlinkat(string(content), fd, tmp); err != nil {
			return fmt.Errorf("write %q: %w", rel, err)
		}
	} else if err := t.writeFile(fd, tmp, mode, content, old, &st); err != nil {
		return fmt.Errorf("write %q: %w", rel, err)
	}
	if old {
		_ = unix.Fchownat(fd, tmp, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
	} else {
		t.chown(fd, tmp)
	}
	if err := unix.Renameat(fd, tmp, fd, name); err != nil {
		_ = unix.Unlinkat(fd, tmp, 0)
		return fmt.Errorf("write %q: %w", rel, err)
	}
	return nil
}

func (t *tree) writeFile(dirfd int, tmp, mode string, content []byte, old bool, st *unix.Stat_t) error {
	perm := uint32(0o644)
	if old && st.Mode&unix.S_IFMT == unix.S_IFREG {
		perm = st.Mode & 0o7777 &^ (unix.S_ISUID | unix.S_ISGID)
	}
	if mode == "100755" {
		perm |= (perm & 0o444) >> 2
	} else {
		perm &^= 0o111
	}
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(content)
	if err == nil {
		err = unix.Fchmod(fd, perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
