package main

import (
	byteorder "encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/dirent"
)

// POSIX ACLs as Linux stores them in the system.posix_acl_* extended
// attributes: a version, then (tag, perm, id) entries sorted by tag and
// id. Written through the xattrs, sandboxd needs no setfacl.
const (
	xattrACLAccess  = "system.posix_acl_access"
	xattrACLDefault = "system.posix_acl_default"

	aclVersion   = 2
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclGroup     = 0x08
	aclMask      = 0x10
	aclOther     = 0x20
	aclUndefined = 0xffffffff
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// errNoACL: the filesystem cannot hold POSIX ACLs.
var errNoACL = errors.New("the filesystem does not support POSIX ACLs")

func parseACL(b []byte) ([]aclEntry, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 || byteorder.LittleEndian.Uint32(b) != aclVersion {
		return nil, fmt.Errorf("malformed ACL (%d bytes)", len(b))
	}
	var out []aclEntry
	for p := b[4:]; len(p) > 0; p = p[8:] {
		out = append(out, aclEntry{byteorder.LittleEndian.Uint16(p), byteorder.LittleEndian.Uint16(p[2:]), byteorder.LittleEndian.Uint32(p[4:])})
	}
	return out, nil
}

func encodeACL(es []aclEntry) []byte {
	slices.SortFunc(es, func(a, b aclEntry) int {
		if a.tag != b.tag {
			return int(a.tag) - int(b.tag)
		}
		return int(int64(a.id) - int64(b.id))
	})
	b := byteorder.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range es {
		b = byteorder.LittleEndian.AppendUint16(b, e.tag)
		b = byteorder.LittleEndian.AppendUint16(b, e.perm)
		b = byteorder.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// minimalACL is the ACL the permission bits mode amount to.
func minimalACL(mode uint32) []aclEntry {
	return []aclEntry{
		{aclUserObj, uint16(mode >> 6 & 7), aclUndefined},
		{aclGroupObj, uint16(mode >> 3 & 7), aclUndefined},
		{aclOther, uint16(mode & 7), aclUndefined},
	}
}

// withUser adds perm for uid to es, widening the mask by perm only (not
// to the union of every entry, as setfacl does), so no other named
// entry gains what a narrower mask kept from it. It reports whether es
// changed.
func withUser(es []aclEntry, uid uint32, perm uint16) ([]aclEntry, bool) {
	changed := false
	found, masked := false, false
	groupObj := uint16(0)
	for i := range es {
		switch es[i].tag {
		case aclUser:
			if es[i].id == uid {
				found = true
				if es[i].perm&perm != perm {
					es[i].perm |= perm
					changed = true
				}
			}
		case aclGroupObj:
			groupObj = es[i].perm
		case aclMask:
			masked = true
			if es[i].perm&perm != perm {
				es[i].perm |= perm
				changed = true
			}
		}
	}
	if !found {
		es = append(es, aclEntry{aclUser, perm, uid})
		changed = true
	}
	if !masked {
		// A minimal ACL has no mask; the group bits were its limit.
		es = append(es, aclEntry{aclMask, groupObj | perm, aclUndefined})
		changed = true
	}
	return es, changed
}

// grantFD gives uid perm on the open file fd (of mode mode) and, for a
// directory, the same in its default ACL, so what is created inside
// inherits it.
func grantFD(fd int, mode uint32, uid uint32, perm uint16, inherit bool) error {
	if err := grantXattr(fd, xattrACLAccess, minimalACL(mode), uid, perm); err != nil {
		return err
	}
	if inherit {
		return grantXattr(fd, xattrACLDefault, minimalACL(mode), uid, perm)
	}
	return nil
}

func grantXattr(fd int, attr string, base []aclEntry, uid uint32, perm uint16) error {
	buf := make([]byte, 4+8*64)
	es := base
	for {
		n, err := unix.Fgetxattr(fd, attr, buf)
		if errors.Is(err, unix.ERANGE) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if errors.Is(err, unix.EOPNOTSUPP) {
			return errNoACL
		}
		if err == nil {
			if es, err = parseACL(buf[:n]); err != nil {
				return err
			}
		} else if !errors.Is(err, unix.ENODATA) {
			return fmt.Errorf("read %s: %w", attr, err)
		}
		break
	}
	es, changed := withUser(slices.Clone(es), uid, perm)
	if !changed {
		return nil
	}
	if err := unix.Fsetxattr(fd, attr, encodeACL(es), 0); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return errNoACL
		}
		return fmt.Errorf("write %s: %w", attr, err)
	}
	return nil
}

// aclGrant is what grantWorkspace did.
type aclGrant struct {
	entries int      // files and directories the user was given
	skipped int      // private or hard-linked ones left alone (see grantTree)
	search  []string // ancestors the user was given search (x) on
}

// grantWorkspace gives uid read and write on everything under dir
// (execute where the owner has it, and on directories), by default on
// what is created there later, and search on the ancestors that would
// otherwise keep it from reaching dir. Owners and permission bits stay.
func grantWorkspace(dir string, uid, gid uint32) (aclGrant, error) {
	var g aclGrant
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return g, err
	}
	if filepath.Clean(dir) == "/" || real == "/" {
		return g, errors.New("the workspace is /, which sandboxd will not give to the agent's user")
	}
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return g, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return g, err
	}
	if err := grantTree(fd, real, st, uid, &g); err != nil {
		return g, err
	}
	// The path as given is walked to reach the workspace, and where a
	// link in it leads.
	seen := map[string]bool{}
	for _, p := range []string{dir, real} {
		for d := filepath.Dir(p); !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			var st unix.Stat_t
			if err := unix.Stat(d, &st); err != nil {
				return g, err
			}
			if !searchable(&st, uid, gid) {
				if err := withFD(d, unix.O_RDONLY|unix.O_DIRECTORY, func(fd int) error {
					return grantFD(fd, st.Mode, uid, 1, false)
				}); err != nil {
					return g, fmt.Errorf("%s: %w", d, err)
				}
				g.search = append(g.search, d)
			}
		}
	}
	return g, nil
}

// searchable says whether uid:gid (with no other groups) may search a
// directory by its permission bits. An ACL the directory already has
// is not read: one that grants search gets an entry that changes
// nothing.
func searchable(st *unix.Stat_t, uid, gid uint32) bool {
	switch {
	case st.Uid == uid:
		return st.Mode&0o100 != 0
	case st.Gid == gid:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}

func withFD(path string, flags int, f func(int) error) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return f(fd)
}

// grantTree grants on the directory fd (at path, for messages) and
// everything beneath it. It walks by descriptor without following
// symlinks, and stays on dir's filesystem. Left alone: what others may
// not read (a file without o+r, a directory without o+rx: a token file,
// a key, whatever root keeps from other users stays kept from the
// agent), and a regular file with more than one link, whose other link
// may be outside the workspace (a root-only file the agent linked in).
func grantTree(fd int, path string, st unix.Stat_t, uid uint32, g *aclGrant) error {
	if st.Uid != uid {
		err := grantFD(fd, st.Mode, uid, 7, true)
		switch {
		case unwritable(err):
			g.skipped++
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		default:
			g.entries++
		}
	}
	names, err := readNames(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range names {
		var cst unix.Stat_t
		if err := unix.Fstatat(fd, name, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since it was listed
		}
		child := filepath.Join(path, name)
		switch cst.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if cst.Dev != st.Dev {
				continue
			}
			if cst.Uid != uid && cst.Mode&0o005 != 0o005 {
				g.skipped++
				continue
			}
			cfd, err := dirent.Open(fd, name, unix.O_RDONLY|unix.O_DIRECTORY)
			if err != nil {
				return fmt.Errorf("%s: %w", child, err)
			}
			err = fstatSame(cfd, &cst)
			if err == nil {
				err = grantTree(cfd, child, cst, uid, g)
			}
			_ = unix.Close(cfd)
			if err != nil {
				return err
			}
		case unix.S_IFREG:
			if cst.Uid == uid {
				continue
			}
			if cst.Nlink > 1 || cst.Mode&0o004 == 0 {
				g.skipped++
				continue
			}
			err := grantFile(fd, name, child, &cst, uid)
			switch {
			case unwritable(err):
				g.skipped++
			case err != nil:
				return err
			default:
				g.entries++
			}
		}
	}
	return nil
}

// grantFile grants rw (and x, where the owner may execute) on the
// regular file name in fd, opened without following a link and checked
// to be the file that was listed.
func grantFile(dirfd int, name, path string, st *unix.Stat_t, uid uint32) error {
	fd, err := dirent.Open(dirfd, name, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := fstatSame(fd, st); err != nil {
		return nil // swapped since it was listed: not what was judged
	}
	perm := uint16(6)
	if st.Mode&0o100 != 0 {
		perm = 7
	}
	if err := grantFD(fd, st.Mode, uid, perm, false); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

var errSwapped = errors.New("changed while sandboxd looked at it")

// unwritable says err is a file whose ACL no one may change: immutable,
// or on a read-only mount. It is left as it is, as the agent would find
// it under any user.
func unwritable(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS)
}

// fstatSame checks that fd is the file want describes, with one link
// for a regular file, and refreshes want.
func fstatSame(fd int, want *unix.Stat_t) error {
	st, err := dirent.Check(fd, dirent.Want{Like: want, OneLink: true})
	if errors.Is(err, dirent.ErrChanged) {
		return errSwapped
	}
	if err != nil {
		return err
	}
	*want = st
	return nil
}

// readNames lists the directory fd without consuming fd's offset for
// the caller's later use (it reads through a duplicate).
func readNames(fd int) ([]string, error) {
	dup, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}
