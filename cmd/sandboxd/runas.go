package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// runAs is the user the agent's commands run as: the credential, and
// the environment they get for that user.
type runAs struct {
	cred *syscall.Credential
	name string // the user's name, or its UID when it has none
	home string // an existing directory the user owns
	// tempHome is a home made for a user without one, removed at exit.
	tempHome string
}

// errRunAsNeedsRoot: only root can start a process as another user.
var errRunAsNeedsRoot = errors.New("--run-as needs sandboxd to run as root")

// resolveRunAs turns --run-as into a user, for a sandboxd whose
// effective UID is euid serving the workspace dir. Empty means the
// default: as root, the workspace's owner when that is not root; else
// sandboxd's own user (nil). "root" (or 0) keeps root explicitly. A user
// that could not write the workspace is refused: the agent could not
// work there.
func resolveRunAs(spec, dir string, euid int) (*runAs, error) {
	if spec == "" {
		if euid != 0 {
			return nil, nil
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid == 0 {
			return nil, nil
		}
		spec = strconv.FormatUint(uint64(st.Uid), 10)
	}
	cred, name, home, err := lookupUser(spec)
	if err != nil {
		return nil, fmt.Errorf("--run-as %q: %w", spec, err)
	}
	if cred.Uid == uint32(euid) {
		return nil, nil // already that user
	}
	if cred.Uid == 0 {
		return nil, nil // root, explicitly
	}
	if euid != 0 {
		return nil, fmt.Errorf("--run-as %q: %w", spec, errRunAsNeedsRoot)
	}
	if err := checkWritable(dir, cred); err != nil {
		return nil, fmt.Errorf("--run-as %q: %w", spec, err)
	}
	r := &runAs{cred: cred, name: name}
	if fi, err := os.Stat(home); home != "" && err == nil && fi.IsDir() && ownedBy(fi, cred.Uid) {
		r.home = home
	} else {
		tmp, err := os.MkdirTemp("", "sandboxd-home-")
		if err != nil {
			return nil, fmt.Errorf("--run-as %q: make a home directory: %w", spec, err)
		}
		if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("--run-as %q: make a home directory: %w", spec, err)
		}
		r.home, r.tempHome = tmp, tmp
	}
	return r, nil
}

// lookupUser reads USER, UID, or UID:GID (names or numbers): the
// credential with the user's groups, its name and home directory.
func lookupUser(spec string) (*syscall.Credential, string, string, error) {
	userPart, groupPart, hasGroup := strings.Cut(spec, ":")
	u, err := user.Lookup(userPart)
	if err != nil {
		if u, err = user.LookupId(userPart); err != nil {
			u = nil
		}
	}
	cred := &syscall.Credential{Groups: []uint32{}}
	var name, home string
	switch {
	case u != nil:
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred.Uid, cred.Gid = uint32(uid), uint32(gid)
		name, home = u.Username, u.HomeDir
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := strconv.ParseUint(id, 10, 32); err == nil && uint32(g) != cred.Gid {
					cred.Groups = append(cred.Groups, uint32(g))
				}
			}
		}
	default:
		uid, err := strconv.ParseUint(userPart, 10, 32)
		if err != nil {
			return nil, "", "", fmt.Errorf("no user %q", userPart)
		}
		cred.Uid, cred.Gid, name = uint32(uid), uint32(uid), userPart
	}
	if hasGroup {
		gid, err := strconv.ParseUint(groupPart, 10, 32)
		if err != nil {
			g, lerr := user.LookupGroup(groupPart)
			if lerr != nil {
				return nil, "", "", fmt.Errorf("no group %q", groupPart)
			}
			gid, _ = strconv.ParseUint(g.Gid, 10, 32)
		}
		cred.Gid, cred.Groups = uint32(gid), []uint32{}
	}
	return cred, name, home, nil
}

// checkWritable says why cred could not create files in dir, if it
// could not: the permission bits as the kernel applies them.
func checkWritable(dir string, cred *syscall.Credential) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	perm := fi.Mode().Perm()
	var need fs.FileMode // write and search, for the class the kernel picks
	switch {
	case st.Uid == cred.Uid:
		need = 0o300
	case st.Gid == cred.Gid || slices.Contains(cred.Groups, st.Gid):
		need = 0o030
	default:
		need = 0o003
	}
	if perm&need != need {
		return fmt.Errorf("the workspace %s (owner %d:%d, mode %v) is not writable by UID %d: chown it to that user, or serve a workspace the user owns",
			dir, st.Uid, st.Gid, perm, cred.Uid)
	}
	return nil
}

func ownedBy(fi fs.FileInfo, uid uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uid
}

// env is environ for commands run as r: HOME, USER and LOGNAME are the
// user's.
func (r *runAs) env(environ []string) []string {
	set := map[string]string{"HOME": r.home, "USER": r.name, "LOGNAME": r.name}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		out = append(out, k+"="+set[k])
	}
	return out
}
