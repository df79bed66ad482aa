package dockerbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// systemTrees are host directories a workspace may be neither at nor
// beneath: mounted read-write, the agent would rewrite the host's
// programs, configuration, devices or container engine.
var systemTrees = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
	"/proc", "/run", "/sbin", "/sys", "/usr", "/var/lib/docker", "/var/log",
}

// systemDirs are host directories a workspace may be beneath but not
// at: each holds what belongs to others (every user's home, every
// temporary file, the system's state), besides the invoking user's home
// directory itself (its keys and credentials); see workspaceRefusal.
var systemDirs = []string{"/", "/home", "/root", "/tmp", "/var", "/var/lib", "/var/tmp", "/srv", "/opt", "/mnt", "/media"}

// maxSymlinks bounds the links one workspace path may go through, as the
// kernel's own limit (ELOOP) does.
const maxSymlinks = 40

// resolveWorkspace resolves a workspace the provider was given to the
// directory it names, which is what is mounted: a path the engine
// resolved itself at mount time could be re-pointed in between. It
// refuses a path that does not name an existing directory, one that
// goes through a symlink owned by anyone but this process's user or
// root (its owner could point it anywhere, and change it), and one that
// resolves to the host's root or a system directory (workspaceRefusal).
func resolveWorkspace(dir string) (string, error) {
	real, err := followLinks(dir, os.Getuid())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", sandbox.Errorf(sandbox.KindStart, "%s: workspace %s does not exist (create it, or leave workspace out for an empty one)", CodegenMode, dir)
		}
		return "", sandbox.Errorf(sandbox.KindStart, "%s: workspace %s: %w", CodegenMode, dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", sandbox.Errorf(sandbox.KindStart, "%s: workspace %s: %w", CodegenMode, dir, err)
	}
	if !fi.IsDir() {
		return "", sandbox.Errorf(sandbox.KindStart, "%s: workspace %s is not a directory", CodegenMode, dir)
	}
	home, _ := os.UserHomeDir()
	if why := workspaceRefusal(real, home); why != "" {
		shown := real
		if real != dir {
			shown = dir + " (which resolves to " + real + ")"
		}
		return "", sandbox.Errorf(sandbox.KindStart, "%s: workspace %s is %s: the agent would read and write it; give a project's own directory", CodegenMode, shown, why)
	}
	return real, nil
}

// workspaceRefusal says why the resolved directory real may not be a
// workspace, or "" when it may. home is the invoking user's home
// directory ("" for none).
func workspaceRefusal(real, home string) string {
	for _, t := range systemTrees {
		if real == t || strings.HasPrefix(real, t+"/") {
			return "in the system directory " + t
		}
	}
	if real == "/" {
		return "the host's root"
	}
	if slices.Contains(systemDirs, real) {
		return "a system directory"
	}
	if home != "" && real == filepath.Clean(home) {
		return "your home directory (its keys and credentials with it)"
	}
	return ""
}

// followLinks resolves every symlink in the absolute path p, component
// by component, as filepath.EvalSymlinks does, and refuses a link owned
// by anyone but uid or root.
func followLinks(p string, uid int) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	resolved := "/"
	rest := strings.Split(p, "/")
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("more than %d symlinks", maxSymlinks)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || (int(st.Uid) != uid && st.Uid != 0) {
			return "", fmt.Errorf("goes through the symlink %s, owned by uid %d, who could point it anywhere: give the directory itself", next, ownerOf(fi))
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}

func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// checkWritable refuses a workspace the container's user uid:gid cannot
// write, judged by the directory's owner, group and mode: the container
// has no capabilities (no DAC override, root's included) and no
// supplementary groups, so that is all the kernel will look at. Without
// the check every Write of the agent fails "permission denied" and
// nothing says so when the sandbox is handed out.
func checkWritable(dir string, uid, gid int) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace %s: %w", CodegenMode, dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	perm := fi.Mode().Perm()
	var can bool
	switch {
	case int(st.Uid) == uid:
		can = perm&0o300 == 0o300
	case int(st.Gid) == gid:
		can = perm&0o030 == 0o030
	default:
		can = perm&0o003 == 0o003
	}
	if can {
		return nil
	}
	return sandbox.Errorf(sandbox.KindStart,
		"%s: workspace %s (owner %d:%d, mode %04o) is not writable by the sandbox's user %d:%d, so every write of the agent would fail: "+
			"give it to that user (chown -R %d:%d %s), or to a non-root owner (the sandbox then runs as its owner), or set the sandbox's user: to a UID:GID that can write it",
		CodegenMode, dir, st.Uid, st.Gid, perm, uid, gid, uid, gid, dir)
}
