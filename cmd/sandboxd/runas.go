package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// runAs is the user the agent's commands run as: the credential, and
// the environment they get for that user.
type runAs struct {
	cred *syscall.Credential // nil: sandboxd's own user
	uid  uint32
	name string // the user's name, or its UID when it has none
	home string // an existing directory the user owns
	// tempHome is a home made for a user without one, removed at exit.
	tempHome string
	why      string    // why this user, for the log line
	acl      *aclGrant // what was granted, when the workspace was given by ACL
}

// errRunAsNeedsRoot: only root can start a process as another user.
var errRunAsNeedsRoot = errors.New("--run-as needs sandboxd to run as root")

// resolveRunAs turns --run-as into a user, for a sandboxd whose
// effective UID is euid serving the workspaces dirs. Empty means the
// default: sandboxd's own user when it is not root; as root, the first
// workspace's owner, or, when root owns it, the unprivileged
// codegenimage.UID, given the workspaces by POSIX ACLs (defaultAgent).
// "root" (or 0) keeps root, and only when asked for. A user that could
// not write the workspace is refused: the agent could not work there.
func resolveRunAs(spec string, dirs []string, euid int) (*runAs, error) {
	dir := dirs[0]
	why := "--run-as " + spec
	if spec == "" {
		if euid != 0 {
			// #nosec G115 -- euid is Geteuid's, a uid_t
			return &runAs{uid: uint32(euid), name: strconv.Itoa(euid), why: "it is sandboxd's own and sandboxd is not root (it cannot start processes as another user)"}, nil
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil, fmt.Errorf("the workspace %s has no owner to run the agent's commands as: give --run-as USER", dir)
		}
		if st.Uid == 0 {
			return defaultAgent(dirs)
		}
		spec = strconv.FormatUint(uint64(st.Uid), 10)
		why = "sandboxd is root and the workspace " + dir + " is theirs (no --run-as)"
	}
	cred, name, home, err := lookupUser(spec)
	if err != nil {
		return nil, fmt.Errorf("--run-as %q: %w", spec, err)
	}
	if cred.Uid == uint32(euid) { // #nosec G115 -- euid is Geteuid's, a uid_t
		if euid == 0 {
			return &runAs{uid: 0, name: name, why: why + ", asked for explicitly"}, nil
		}
		return &runAs{uid: cred.Uid, name: name, why: why + ", sandboxd's own user"}, nil
	}
	if euid != 0 {
		return nil, fmt.Errorf("--run-as %q: %w", spec, errRunAsNeedsRoot)
	}
	if err := checkWritable(dir, cred); err != nil {
		return nil, fmt.Errorf("--run-as %q: %w", spec, err)
	}
	r := &runAs{cred: cred, uid: cred.Uid, name: name, why: why}
	if fi, err := os.Stat(home); home != "" && err == nil && fi.IsDir() && ownedBy(fi, cred.Uid) {
		r.home = home
	} else if err := r.makeHome(false); err != nil {
		return nil, fmt.Errorf("--run-as %q: %w", spec, err)
	}
	return r, nil
}

// defaultAgent is the user the agent's commands run as when sandboxd is
// root, root owns the workspace and no --run-as was given: the sandboxd
// image's unprivileged user (codegenimage.UID), which owns nothing on a
// host. It gets the workspaces without a chown, so the checkout stays
// root's (git as root keeps working there): a POSIX ACL entry for it on
// every file and directory, a default entry on every directory so what
// is created later is its too, and search on the ancestors that would
// keep it out. Where ACLs cannot be written, sandboxd refuses to start
// and says what to pass.
func defaultAgent(dirs []string) (*runAs, error) {
	cred := &syscall.Credential{Uid: codegenimage.UID, Gid: codegenimage.GID, Groups: []uint32{}}
	name := strconv.Itoa(codegenimage.UID)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	r := &runAs{cred: cred, uid: cred.Uid, name: name, acl: &aclGrant{},
		why: "sandboxd is root, root owns the workspace and no --run-as was given: the agent gets an unprivileged user, and the workspace by POSIX ACLs"}
	for _, d := range dirs {
		g, err := grantWorkspace(d, cred.Uid, cred.Gid)
		if err != nil {
			return nil, fmt.Errorf("sandboxd is root and root owns the workspace %s, so the agent's commands would run as UID %d, "+
				"but the workspace cannot be given to that user: %w; give --run-as USER (a user who can write the workspace), "+
				"or --run-as root to run them as root (they could then read the token file and sandboxd's memory, and signal any process)",
				d, cred.Uid, err)
		}
		r.acl.entries += g.entries
		r.acl.skipped += g.skipped
		r.acl.search = append(r.acl.search, g.search...)
	}
	if err := r.makeHome(true); err != nil {
		return nil, err
	}
	return r, nil
}

// makeHome makes r a private temporary home, removed at exit. With
// trustRepos, its git config trusts every repository: git refuses one
// another user owns, and the workspace (or the repository it is in) is
// root's.
func (r *runAs) makeHome(trustRepos bool) error {
	tmp, err := os.MkdirTemp("", "sandboxd-home-")
	if err != nil {
		return fmt.Errorf("make a home directory: %w", err)
	}
	if trustRepos {
		// #nosec G306 -- root writes it and the agent's user, another UID, must read it
		if err := os.WriteFile(filepath.Join(tmp, ".gitconfig"), []byte("[safe]\n\tdirectory = *\n"), 0o644); err != nil {
			_ = os.RemoveAll(tmp)
			return fmt.Errorf("make a home directory: %w", err)
		}
	}
	if err := os.Chown(tmp, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("make a home directory: %w", err)
	}
	r.home, r.tempHome = tmp, tmp
	return nil
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

// log says at start which user the agent's commands run as, and why.
func (r *runAs) log(log *slog.Logger) {
	msg := fmt.Sprintf("agent commands run as uid %d because %s", r.uid, r.why)
	attrs := []any{"user", r.name, "uid", r.uid}
	if r.cred != nil {
		attrs = append(attrs, "gid", r.cred.Gid, "home", r.home)
	}
	if a := r.acl; a != nil {
		attrs = append(attrs, "acl_granted", a.entries, "acl_left_private", a.skipped)
		if len(a.search) > 0 {
			attrs = append(attrs, "acl_search_on", strings.Join(a.search, ":"))
		}
	}
	if r.uid == 0 {
		log.Warn(msg+"; they can read sandboxd's memory and the token file, and signal any process", attrs...)
		return
	}
	log.Info(msg, attrs...)
}
