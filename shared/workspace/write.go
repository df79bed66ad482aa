package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data atomically: it writes a
// temporary file beside it, syncs it, and renames it over the old one, so
// a reader sees the old content or the new, never a part, and so does a
// host that lost power. The directory is not synced: after such a crash
// the path may hold the old content (the rename reaches the disk with
// the file system's next commit), which is worth less to an agent than
// the journal commit each write would otherwise wait for. An existing
// file keeps its permission bits; a new one gets perm. Missing parent
// directories are created. A symlink at path is followed (inside the
// root) and its target replaced.
func (w *Workspace) WriteFile(path string, data []byte, perm fs.FileMode) error {
	rel, err := w.Rel(path)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("write %q: it is the workspace directory", path)
	}
	target, mode, was, err := w.writeTarget(path, rel, perm)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	created := w.missingDirs(dir)
	if err := w.root.MkdirAll(dir, 0o755); err != nil {
		return w.wrap(path, fmt.Errorf("write %q: create its directory: %w", path, err))
	}
	if err := w.chownDirs(created); err != nil {
		return w.wrap(path, fmt.Errorf("write %q: give its new directories their owner: %w", path, err))
	}
	tmp := filepath.Join(dir, "."+filepath.Base(target)+".tmp-"+randomSuffix())
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return w.wrap(path, fmt.Errorf("write %q: %w", path, err))
	}
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = w.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	if err := w.chownNew(f, was); err != nil {
		return fmt.Errorf("write %q: keep its owner: %w", path, err)
	}
	// The mode the file was created with went through the umask (and
	// a chown clears set-ID bits): set it last.
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %q: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	if err := w.root.Rename(tmp, target); err != nil {
		return w.wrap(path, fmt.Errorf("write %q: %w", path, err))
	}
	ok = true
	return nil
}

// writeTarget is where a write to rel lands — rel, or the file its
// symlinks lead to inside the workspace — the mode it gets, and the
// owner of the file it replaces (nil for a new one).
func (w *Workspace) writeTarget(path, rel string, perm fs.FileMode) (string, fs.FileMode, *owner, error) {
	target, err := w.resolve(path, rel, true)
	if err != nil {
		return "", 0, nil, err
	}
	fi, err := w.root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return target, perm, nil, nil
	case err != nil:
		return "", 0, nil, w.wrap(path, fmt.Errorf("write %q: %w", path, err))
	case fi.IsDir():
		return "", 0, nil, fmt.Errorf("write %q: it is a directory", path)
	}
	return target, fi.Mode().Perm(), ownerOf(fi), nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
