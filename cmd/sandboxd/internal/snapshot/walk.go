package snapshot

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Skipped is a path a snapshot left out, and why.
type Skipped struct {
	Path   string
	Reason string
}

// scan is what a walk of the workspace found: the paths a snapshot holds
// and those it skips.
type scan struct {
	paths   []string
	skipped []Skipped
	held    int // how many of paths the index took
}

// maxPath is PATH_MAX: git cannot hold a longer path.
const maxPath = 4096

// isGitDir reports whether a path component is one git keeps for itself
// (it refuses ".git" in any case).
func isGitDir(name string) bool { return strings.EqualFold(name, ".git") }

// walk lists the workspace's regular files and symlinks, relative and
// slash-separated, without following a symlink or entering a .git.
func (s *Store) walk() (scan, error) {
	var sc scan
	err := filepath.WalkDir(s.workspace, func(path string, d fs.DirEntry, err error) error {
		if path == s.workspace {
			return err
		}
		rel, rerr := filepath.Rel(s.workspace, path)
		if rerr != nil {
			return rerr
		}
		if err != nil {
			sc.skipped = append(sc.skipped, Skipped{rel, "unreadable: " + unwrapPath(err)})
			return nil
		}
		if isGitDir(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if s.hidden(d) {
			sc.skipped = append(sc.skipped, Skipped{rel, "the agent's user may not read it"})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				sc.skipped = append(sc.skipped, Skipped{rel, "unreadable: " + unwrapPath(err)})
				return nil
			}
			if fi.Size() > s.opts.MaxFileSize {
				sc.skipped = append(sc.skipped, Skipped{rel, fmt.Sprintf("%d bytes, over the %d-byte cap", fi.Size(), s.opts.MaxFileSize)})
				return nil
			}
			if fi.Mode().Perm()&0o444 == 0 {
				sc.skipped = append(sc.skipped, Skipped{rel, "not readable (mode " + fi.Mode().Perm().String() + ")"})
				return nil
			}
		default:
			sc.skipped = append(sc.skipped, Skipped{rel, "not a regular file or symlink"})
			return nil
		}
		if len(rel) >= maxPath {
			sc.skipped = append(sc.skipped, Skipped{rel[:200] + "...", fmt.Sprintf("a path of %d bytes, over %d", len(rel), maxPath-1)})
			return nil
		}
		if len(sc.paths) >= s.opts.MaxFiles {
			return fmt.Errorf("the workspace has more than %d files", s.opts.MaxFiles)
		}
		sc.paths = append(sc.paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return scan{}, fmt.Errorf("walk the workspace: %w", err)
	}
	slices.Sort(sc.paths)
	return sc, nil
}

// hidden reports whether the workspace's owner (Options.Owner) may not
// read d, when sandboxd runs as root: a snapshot root took of it would
// otherwise let the agent read it once restored (a hard link to a
// root-only file, a root-only directory renamed away and brought back).
// Supplementary groups are not consulted, so this errs on the side of
// leaving files out.
func (s *Store) hidden(d fs.DirEntry) bool {
	o := s.opts.Owner
	if o == nil || s.euid != 0 || d.Type()&fs.ModeSymlink != 0 {
		return false
	}
	fi, err := d.Info()
	if err != nil {
		return false // reported as unreadable by the caller
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	var need uint32 = 0o4 // read
	if d.IsDir() {
		need = 0o5 // read and search
	}
	perm := uint32(fi.Mode().Perm())
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
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
