package files

import (
	"errors"
	"path/filepath"
	"strings"
)

// ErrGitDir is the error of a Write or Edit under a .git directory. What
// is there runs on the host: core.fsmonitor or core.pager in .git/config,
// a hook in .git/hooks, a gitdir: line in a .git file, each run by the
// user's next git command outside any sandbox. The agent runs git
// through Bash instead, where git itself guards what it writes.
var ErrGitDir = errors.New("it is inside a .git directory, which holds commands git runs on the host " +
	"(core.fsmonitor, hooks); run git through Bash instead (sandboxd --allow-git-writes lifts this)")

// checkProtected refuses path (rel, relative to the root) when it lies
// in a .git directory, or is a .git file, as written or where its
// symlinks lead: the workspace's own resolution, which is where WriteFile
// writes.
func (f *Files) checkProtected(path, rel string) error {
	if f.opts.AllowGitWrites {
		return nil
	}
	if inGitDir(rel) {
		return ErrGitDir
	}
	real, err := f.ws.Resolve(path)
	if err != nil {
		return err
	}
	if inGitDir(real) {
		return ErrGitDir
	}
	return nil
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
