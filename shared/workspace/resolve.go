package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxLinks is how many symlinks one path may go through, as Linux's
// MAXSYMLINKS.
const maxLinks = 40

// escapes reports whether err is os.Root refusing a step out of the root,
// which an absolute symlink is too, wherever it points.
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == errPathEscapes {
			return true
		}
	}
	return false
}

// retry runs op on rel. When the root refuses that as a step out, which
// it does for every absolute symlink, rel's symlinks are resolved here
// (an absolute one that names a place inside the workspace becomes the
// path to it) and op runs once more on the result, still through the
// root, so a link swapped in meanwhile is refused as before. follow says
// whether op follows a symlink in rel's last component.
func (w *Workspace) retry(path, rel string, follow bool, op func(rel string) error) error {
	err := op(rel)
	if !escapes(err) {
		return w.wrap(path, err)
	}
	real, rerr := w.resolve(path, rel, follow)
	if rerr != nil {
		return rerr
	}
	if real == rel {
		return w.outside(path, nil)
	}
	return w.wrap(path, op(real))
}

// Resolve is the path, relative to the root, that path names once its
// symlinks are followed (the last component's too): where WriteFile
// writes, and what a reader of path reads. Components that do not exist
// yet are kept as written. A path that leads out is an *OutsideError.
func (w *Workspace) Resolve(path string) (string, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return "", err
	}
	return w.resolve(path, rel, true)
}

// resolve follows the symlinks in rel, in the root, and returns the path
// they lead to, relative to the root. A relative link is read from the
// directory that holds it; an absolute one must name a path under the
// workspace directory, as given or as resolved, and is read from there.
// Anything that leads out is an *OutsideError. An absolute link is judged
// by its text, never by the file system outside the root, so
// /proc/self/cwd is outside whatever the process's directory is. The
// first missing component ends the walk: the rest is joined on as it is,
// for a write to create. With follow false a link in the last component
// is left as it is.
func (w *Workspace) resolve(path, rel string, follow bool) (string, error) {
	var done []string // components resolved, each no symlink when checked
	todo := components(rel)
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			if len(done) == 0 {
				return "", w.outside(path, nil)
			}
			done = done[:len(done)-1]
			continue
		}
		next := strings.Join(append(done, c), "/")
		if len(todo) == 0 && !follow {
			done = append(done, c)
			break
		}
		fi, err := w.root.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			done = append(append(done, c), todo...)
			break
		}
		if err != nil {
			return "", w.wrap(path, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("path %s: too many levels of symbolic links", quoteStart(path))
		}
		link, err := w.root.Readlink(next)
		if err != nil {
			return "", w.wrap(path, err)
		}
		if filepath.IsAbs(link) {
			in, ok := w.under(link)
			if !ok {
				return "", w.outside(path, fmt.Errorf("%s is a symlink to %s", next, link))
			}
			done = nil
			todo = append(in, todo...)
			continue
		}
		todo = append(components(link), todo...)
	}
	real := filepath.Clean(strings.Join(done, "/"))
	if real == "" {
		real = "."
	}
	if !local(real) {
		return "", w.outside(path, nil)
	}
	if err := checkLimits(path, real); err != nil {
		return "", err
	}
	return real, nil
}

// under returns an absolute path's components below the workspace
// directory (as given or as resolved), judged by its text alone: a ".."
// in it is left for the walk to take, so it cannot climb out unseen.
func (w *Workspace) under(abs string) ([]string, bool) {
	parts := components(abs)
	for _, base := range []string{w.dir, w.resolved} {
		b := components(base)
		if len(parts) >= len(b) && equal(parts[:len(b)], b) {
			return parts[len(b):], true
		}
	}
	return nil, false
}

// components splits a path into its names, dropping empty ones and ".".
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
