package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Pinned reports whether the plugin file at path, found as plugin name at
// version v, is one a lock file vouches for by its SHA-256. A file owned
// by someone else may run only when it is pinned: its owner can replace it
// at will, but not with content of the same hash.
type Pinned func(c Candidate) bool

// foreignError is a plugin file, or a directory above it, owned by a user
// who is neither the one running the host nor root.
type foreignError struct {
	what string // "file /p/x", "directory /p"
	uid  uint32
	self int
}

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s is owned by %s, not by you (%s) or root: its owner could replace what runs as you; "+
		"chown it (and every directory above it) to yourself or root, move the plugin to a directory you own, or pin it by SHA-256 in a lock file you or root own",
		e.what, describeUID(e.uid), describeUID(uint32(e.self))) // #nosec G115 -- self is Geteuid's, a uid_t
}

// describeUID is "uid 1000 (alice)", or "uid 1000" when the name is unknown.
func describeUID(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return "uid " + id + " (" + u.Username + ")"
	}
	return "uid " + id
}

// trustedOwner reports whether files owned by uid may run in this
// process: its own effective user's and root's. Anyone else could swap
// the file (or, owning a directory above it, the directory) between the
// scan and the launch.
func trustedOwner(uid uint32) bool {
	return uid == 0 || int(uid) == os.Geteuid()
}

// ownerOf is the owner of what info describes.
func ownerOf(info fs.FileInfo) (uint32, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// checkOwner refuses a file owned by an untrusted user.
func checkOwner(what string, info fs.FileInfo) *foreignError {
	uid, ok := ownerOf(info)
	if !ok || trustedOwner(uid) {
		return nil
	}
	return &foreignError{what: what, uid: uid, self: os.Geteuid()}
}

// checkAncestors refuses dir when it, or any directory above it, is owned
// by an untrusted user: whoever owns a directory can rename what is in it
// and put a tree of their own in its place. A directory above that others
// may write to is refused too unless it is sticky (as /tmp is), where they
// cannot rename what is not theirs.
func checkAncestors(dir string) (string, *foreignError) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			return fmt.Sprintf("cannot inspect directory %s: %v", d, err), nil
		}
		if fe := checkOwner("directory "+d, info); fe != nil {
			return fe.Error(), fe
		}
		if d != dir && info.Mode().Perm()&unsafeBits != 0 && info.Mode()&fs.ModeSticky == 0 {
			return fmt.Sprintf("directory %s, above the plugin, is writable by group or others (mode %s)", d, info.Mode()), nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// CheckTrusted returns why the file at path (a symlink judged by its
// target) could be replaced by someone other than the user running this
// process or root, or nil when it could not: it and every directory above
// it belong to one of them, and neither it nor its directory is writable
// by group or others. A lock file must pass it for its pins to let
// another user's plugin run: a lock that user wrote would vouch for
// anything they like.
func CheckTrusted(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	info, err := os.Stat(real)
	if err != nil {
		return err
	}
	if fe := checkOwner("file "+real, info); fe != nil {
		return fe
	}
	if info.Mode().Perm()&unsafeBits != 0 {
		return fmt.Errorf("file %s is writable by group or others (mode %s)", real, info.Mode())
	}
	dir := filepath.Dir(real)
	dinfo, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if why := checkDir(dir, dinfo); why != "" {
		return errors.New(why)
	}
	if why, _ := checkAncestors(dir); why != "" {
		return errors.New(why)
	}
	return nil
}
