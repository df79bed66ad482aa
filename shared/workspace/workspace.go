package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is an open root directory.
type Workspace struct {
	dir      string // absolute, as given (cleaned)
	resolved string // dir with its symlinks resolved
	root     *os.Root
	newOwner *owner // of what WriteFile creates; nil: the process's
}

// Open opens dir as a workspace. It must be an existing directory.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	root, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Workspace{dir: abs, resolved: resolved, root: root}, nil
}

// Dir is the workspace's directory, absolute, as it was given.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the root directory.
func (w *Workspace) Close() error { return w.root.Close() }

// Root is the os.Root every access goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// OutsideError is a path that is not inside the workspace.
type OutsideError struct {
	Path      string
	Workspace string
	Err       error // what refused it, when it was the file system
}

func (e *OutsideError) Error() string {
	msg := fmt.Sprintf("path %q is outside the workspace %s", e.Path, e.Workspace)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *OutsideError) Unwrap() error { return e.Err }

// IsOutside reports whether err is, or wraps, an *OutsideError.
func IsOutside(err error) bool {
	var oe *OutsideError
	return errors.As(err, &oe)
}

// Rel turns path into a path relative to the root, without touching the
// file system: relative paths are taken as they are, absolute ones must
// lie under the workspace directory. It refuses what lexically leaves the
// root; where a symlink leads is the root's to refuse when the path is
// used.
func (w *Workspace) Rel(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("empty path")
	}
	if err := checkLimits(path, ""); err != nil {
		return "", err
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", fmt.Errorf("path %s holds a NUL byte", quoteStart(path))
	}
	rel := path
	if filepath.IsAbs(path) {
		rel = ""
		for _, base := range []string{w.dir, w.resolved} {
			if r, err := filepath.Rel(base, filepath.Clean(path)); err == nil && local(r) {
				rel = r
				break
			}
		}
		if rel == "" {
			return "", w.outside(path, nil)
		}
	}
	rel = filepath.Clean(rel)
	if !local(rel) {
		return "", w.outside(path, nil)
	}
	if err := checkLimits(path, rel); err != nil {
		return "", err
	}
	return rel, nil
}

// local reports whether a cleaned relative path stays at or below ".".
func local(rel string) bool {
	return rel == "." || filepath.IsLocal(rel)
}

func (w *Workspace) outside(path string, err error) error {
	return &OutsideError{Path: path, Workspace: w.dir, Err: err}
}

// errPathEscapes is how os.Root words a refusal; the os package does not
// export the error, so it is recognized by its text.
const errPathEscapes = "path escapes from parent"

// wrap turns the root's refusal into an *OutsideError naming path, and
// leaves other errors as they are.
func (w *Workspace) wrap(path string, err error) error {
	if err == nil {
		return nil
	}
	if escapes(err) {
		return w.outside(path, nil)
	}
	return err
}

// Open opens path for reading.
func (w *Workspace) Open(path string) (*os.File, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return nil, err
	}
	var f *os.File
	err = w.retry(path, rel, true, func(rel string) (err error) {
		f, err = w.root.Open(rel)
		return err
	})
	return f, err
}

// OpenFile opens path with flag and perm, as os.OpenFile does.
func (w *Workspace) OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return nil, err
	}
	var f *os.File
	err = w.retry(path, rel, flag&oNoFollow == 0, func(rel string) (err error) {
		f, err = w.root.OpenFile(rel, flag, perm)
		return err
	})
	return f, err
}

// Stat follows a final symlink (inside the root); Lstat does not.
func (w *Workspace) Stat(path string) (fs.FileInfo, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return nil, err
	}
	var fi fs.FileInfo
	err = w.retry(path, rel, true, func(rel string) (err error) {
		fi, err = w.root.Stat(rel)
		return err
	})
	return fi, err
}

// Lstat describes path itself, a symlink included.
func (w *Workspace) Lstat(path string) (fs.FileInfo, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return nil, err
	}
	var fi fs.FileInfo
	err = w.retry(path, rel, false, func(rel string) (err error) {
		fi, err = w.root.Lstat(rel)
		return err
	})
	return fi, err
}

// ReadFile reads the whole file at path.
func (w *Workspace) ReadFile(path string) ([]byte, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = w.retry(path, rel, true, func(rel string) (err error) {
		b, err = w.root.ReadFile(rel)
		return err
	})
	return b, err
}

// MkdirAll creates path and its missing parents.
func (w *Workspace) MkdirAll(path string, perm fs.FileMode) error {
	rel, err := w.Rel(path)
	if err != nil {
		return err
	}
	return w.retry(path, rel, true, func(rel string) error { return w.root.MkdirAll(rel, perm) })
}

// Abs is the absolute path of a path inside the workspace, for messages
// and for tools that take one (it is under Dir).
func (w *Workspace) Abs(path string) (string, error) {
	rel, err := w.Rel(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.dir, rel), nil
}
