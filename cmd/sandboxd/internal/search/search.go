package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Options tunes a Searcher; zero values take the defaults.
type Options struct {
	RipgrepPath string // default: "rg" looked up on PATH
	GlobLimit   int    // max paths Glob returns, default 100
	MaxOutput   int    // byte cap on a Grep result, default 256 KiB (say so when cut)
	// Scrubber is what hides secrets from the results; Grep never counts
	// a line as matching when it holds something the scrubber redacts.
	// Default: the well-known formats alone.
	Scrubber *scrub.Scrubber
	// OnRedact, when set, is told how many redactions the Scrubber made
	// in the lines Grep shows (for sandboxd's metrics).
	OnRedact func(n int)
	// Credential, when set, is the user rg runs as: the agent's (sandboxd
	// --run-as), so that a directory the agent swaps for a symlink while
	// rg walks leads rg nowhere the agent could not read itself. Nil
	// runs rg as sandboxd's user.
	Credential *syscall.Credential
	// Env, when set, is the environment rg runs with: sandboxd passes
	// the one the agent's commands get, without secrets (a process of
	// the agent's user can read rg's /proc/PID/environ) and with the
	// agent's HOME, whose global excludes file rg honours. Nil: sandboxd's
	// own.
	Env []string
}

const (
	defaultGlobLimit = 100
	defaultMaxOutput = 256 << 10
)

// Searcher runs Glob and Grep in one workspace; calls may run
// concurrently. Close releases what it holds.
type Searcher struct {
	ws        *workspace.Workspace
	rg        string
	globLimit int
	maxOutput int
	mtimes    *mtimeCache // what Glob has stat'ed, kept fresh by inotify
	scrub     *scrub.Scrubber
	onRedact  func(int)
	cred      *syscall.Credential // rg's user; nil: ours
	env       []string            // rg's environment; nil: ours
}

// New finds ripgrep and fills in the defaults.
func New(ws *workspace.Workspace, opts Options) (*Searcher, error) {
	if ws == nil {
		return nil, errors.New("search: no workspace")
	}
	name := opts.RipgrepPath
	if name == "" {
		name = "rg"
	}
	rg, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("search: ripgrep (%s) not found; install the Debian package ripgrep (apt-get install ripgrep): %w", name, err)
	}
	s := &Searcher{ws: ws, rg: rg, globLimit: opts.GlobLimit, maxOutput: opts.MaxOutput, mtimes: newMtimeCache(), scrub: opts.Scrubber, onRedact: opts.OnRedact, cred: opts.Credential, env: opts.Env}
	if s.scrub == nil {
		s.scrub = scrub.New(nil)
	}
	if s.globLimit <= 0 {
		s.globLimit = defaultGlobLimit
	}
	if s.maxOutput <= 0 {
		s.maxOutput = defaultMaxOutput
	}
	return s, nil
}

// Close stops the inotify watches Glob keeps; Glob still works after it,
// stat'ing every file.
func (s *Searcher) Close() error {
	s.mtimes.close()
	return nil
}

// target is a checked path argument.
type target struct {
	abs   string // what rg is given: under the workspace dir, so rg prints paths there
	isDir bool
}

// resolve checks a path argument ("" is the workspace root) before rg is
// pointed at it. rg follows a symlink it is given as a root, so the path
// is stat'ed through the workspace (which refuses links that leave it) and
// the place the links lead is found there too. Should a directory on the
// way be swapped for a link out after this, rg, which runs as the agent's
// user under --run-as, reaches only what the agent could read itself.
func (s *Searcher) resolve(path string) (target, error) {
	if path == "" {
		path = "."
	}
	rel, err := s.ws.Rel(path)
	if err != nil {
		return target{}, err
	}
	fi, err := s.ws.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !workspace.IsOutside(err) {
			return target{}, fmt.Errorf("path %q does not exist", path)
		}
		return target{}, err
	}
	if !fi.Mode().IsDir() && !fi.Mode().IsRegular() {
		// A FIFO or device would have rg wait or read forever.
		return target{}, fmt.Errorf("path %q is neither a regular file nor a directory", path)
	}
	realRel, err := s.ws.Resolve(path)
	if err != nil {
		return target{}, err
	}
	// rg skips .git only below the paths it is given, never the path itself.
	if inGitDir(rel) || inGitDir(realRel) {
		return target{}, fmt.Errorf("path %q is inside a .git directory, which search leaves out", path)
	}
	return target{abs: filepath.Join(s.ws.Dir(), rel), isDir: fi.IsDir()}, nil
}

func inGitDir(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}
