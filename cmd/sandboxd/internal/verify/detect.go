package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Detector recognizes one kind of project.
type Detector interface {
	// Markers are the files whose presence marks the project, for the
	// error that says none was found.
	Markers() []string
	// Detect looks at dir, a cleaned workspace-relative directory ("."
	// is the root), and returns the project rooted there, if any.
	Detect(ws *workspace.Workspace, dir string) (Project, bool, error)
}

// Project knows the commands that test, lint and typecheck it. Every
// step runs in the directory the call asked for, which is the project's
// root or below it.
type Project interface {
	// Name says what was found, e.g. "Go module example.com/app in sub".
	Name() string
	Typecheck() []Step
	Lint() []Step
	Test(opts TestOptions) []Step
}

// TestOptions narrow a test run.
type TestOptions struct {
	// Packages are the patterns to test (Go: "./..."), already checked.
	Packages []string
	// Run selects tests by regular expression; empty runs them all.
	Run string
	// Timeout is the whole call's limit, which a tool with its own
	// per-run timeout should not undercut.
	Timeout time.Duration
}

// DefaultDetectors are the project types sandboxd knows, in the order
// they are tried: in a directory that holds markers of several, the
// first wins.
func DefaultDetectors() []Detector {
	return []Detector{GoDetector{}, RustDetector{}, PythonDetector{}, NodeDetector{}}
}

// NoProjectError says no detector recognized the directory or any
// directory above it in the workspace.
type NoProjectError struct {
	Path    string
	Markers []string
}

func (e *NoProjectError) Error() string {
	return fmt.Sprintf("no supported project found at %s (looked for %s)", e.Path, strings.Join(e.Markers, ", "))
}

// detect finds the project that holds dir: each detector looks at dir,
// then at each parent up to the workspace root, and the nearest match
// wins, so a nested module is not mistaken for its parent.
func detect(ws *workspace.Workspace, detectors []Detector, dir, shown string) (Project, error) {
	for d := dir; ; d = filepath.Dir(d) {
		for _, det := range detectors {
			p, ok, err := det.Detect(ws, d)
			if err != nil {
				return nil, err
			}
			if ok {
				return p, nil
			}
		}
		if d == "." || d == "/" {
			break
		}
	}
	var markers []string
	for _, det := range detectors {
		markers = append(markers, det.Markers()...)
	}
	return nil, &NoProjectError{Path: shown, Markers: markers}
}

// isFile reports whether rel names a regular file in the workspace; an
// error other than absence (permissions, a link out of the workspace) is
// returned, not taken for absence.
func isFile(ws *workspace.Workspace, rel string) (bool, error) {
	fi, err := ws.Stat(rel)
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), nil
	case errors.Is(err, fs.ErrNotExist) && !workspace.IsOutside(err):
		return false, nil
	}
	return false, fmt.Errorf("look for %s: %w", rel, err)
}
