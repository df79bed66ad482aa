package files

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrGitDir is the error of a Write or Edit under a .git directory. What
// is there runs on the host: core.fsmonitor or core.pager in .git/config,
// a hook in .git/hooks, a gitdir: line in a .git file, each run by the
// user's next git command outside any sandbox. The agent runs git
// through Bash instead, where git itself guards what it writes.
var ErrGitDir = errors.New("it is inside a .git directory, which holds commands git runs on the host " +
	"(core.fsmonitor, hooks); run git through Bash instead (sandboxd --allow-git-writes lifts this)")

// checkProtected refuses rel (relative to the root, cleaned) when it
// lies in a .git directory, or is a .git file, either as written or where
// its symlinks lead. An existing file is judged where it resolves; a new
// one by its nearest existing directory, and the components below it as
// written.
func (f *Files) checkProtected(rel string, exists bool) error {
	if f.opts.AllowGitWrites {
		return nil
	}
	if inGitDir(rel) {
		return ErrGitDir
	}
	at := rel
	if !exists {
		at = filepath.Dir(rel)
	}
	for {
		real, err := f.resolve(at)
		switch {
		case err == nil:
			r, err := filepath.Rel(f.root, real)
			if err != nil || inGitDir(r) {
				return ErrGitDir
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return err
		case at == ".":
			return nil
		}
		at = filepath.Dir(at)
	}
}

// resolve is where rel, a regular file or a directory, leads in the file
// system, symlinks followed (inside the root, as the root follows them):
// the path the kernel reports for a descriptor open on it. (Not O_PATH:
// the root opens the last component without following it then, and the
// descriptor would name the symlink.)
func (f *Files) resolve(rel string) (string, error) {
	file, err := f.ws.OpenFile(rel, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer file.Close()
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(int(file.Fd())))
}

// inGitDir reports whether a relative path has a component named .git
// (in any case: a case-insensitive file system would take .GIT for it).
func inGitDir(rel string) bool {
	for c := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}
