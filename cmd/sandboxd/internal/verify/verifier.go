package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Limits on a call's timeout.
const (
	DefaultTimeout = 10 * time.Minute
	MaxTimeout     = 30 * time.Minute
)

// Options configure a Verifier.
type Options struct {
	// Env is the whole environment of every command ("K=V"), secrets
	// already removed. Its PATH is where commands are looked up.
	Env []string
	// Detectors are tried in order; nil means DefaultDetectors.
	Detectors []Detector
	// MaxShown caps the findings a report lists; 0 means 200.
	MaxShown int
	// Credential, when set, is the user the checks run as (see
	// shells.Options.Credential).
	Credential *syscall.Credential
}

// Verifier runs checks in one workspace. It holds no state between
// calls, which may run concurrently.
type Verifier struct {
	ws   *workspace.Workspace
	opts Options
}

// New returns a Verifier for ws.
func New(ws *workspace.Workspace, opts Options) *Verifier {
	if opts.Detectors == nil {
		opts.Detectors = DefaultDetectors()
	}
	if opts.MaxShown <= 0 {
		opts.MaxShown = 200
	}
	return &Verifier{ws: ws, opts: opts}
}

// Request is one call's arguments.
type Request struct {
	// Path is the directory to check, absolute inside the workspace or
	// relative to it; empty is the workspace root.
	Path string
	// Timeout bounds the whole call: 0 means DefaultTimeout, and more
	// than MaxTimeout is refused.
	Timeout time.Duration
	// Packages and Run apply to tests only: the patterns to test
	// (default "./...") and a regular expression selecting tests.
	Packages []string
	Run      string
	// Env adds "K=V" entries to this call's commands alone (secrets the
	// agent named); a step's own settings win over them.
	Env []string
	// Progress, when set, is given each line of output as it arrives,
	// with the step's tool ("go test"): readable text, as go test -json's
	// events carry it. It is called from one goroutine at a time.
	Progress func(tool, line string)
}

// Typecheck compiles the project, tests included, without running it.
func (v *Verifier) Typecheck(ctx context.Context, req Request) (*Report, error) {
	return v.check(ctx, "typecheck", req, Project.Typecheck)
}

// Lint runs the project's linters.
func (v *Verifier) Lint(ctx context.Context, req Request) (*Report, error) {
	return v.check(ctx, "lint", req, Project.Lint)
}

// Test runs the project's tests.
func (v *Verifier) Test(ctx context.Context, req Request) (*Report, error) {
	packages := req.Packages
	if len(packages) == 0 {
		packages = []string{"./..."}
	}
	if err := v.checkPatterns(req.Path, packages); err != nil {
		return nil, err
	}
	if strings.ContainsAny(req.Run, "\x00\n") {
		return nil, fmt.Errorf("run %q: a test pattern holds no NUL or newline", req.Run)
	}
	return v.check(ctx, "tests", req, func(p Project) []Step {
		return p.Test(TestOptions{Packages: packages, Run: req.Run, Timeout: timeoutOf(req)})
	})
}

func timeoutOf(req Request) time.Duration {
	if req.Timeout == 0 {
		return DefaultTimeout
	}
	return req.Timeout
}

func (v *Verifier) check(ctx context.Context, check string, req Request, steps func(Project) []Step) (*Report, error) {
	if req.Timeout < 0 || req.Timeout > MaxTimeout {
		return nil, fmt.Errorf("timeout %s: want at most %s (%d ms)", req.Timeout, MaxTimeout, MaxTimeout.Milliseconds())
	}
	rel, cwd, err := v.resolve(req.Path)
	if err != nil {
		return nil, err
	}
	shown := req.Path
	if shown == "" {
		shown = "the workspace root"
	}
	project, err := detect(v.ws, v.opts.Detectors, rel, shown)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeoutOf(req))
	r := &Report{Check: check, Project: project.Name(), maxShown: v.opts.MaxShown}
	for _, st := range steps(project) {
		dir := cwd
		if st.Dir != "" {
			dir = filepath.Join(v.ws.Dir(), st.Dir)
		}
		pl := placer{cwd: dir, rel: v.ws.Rel}
		if len(req.Env) > 0 {
			st.Env = append(slices.Clone(req.Env), st.Env...)
		}
		left := time.Until(deadline)
		if left <= 0 {
			r.add(StepResult{Tool: st.Tool, TimedOut: true, Timeout: timeoutOf(req), Skipped: true})
			continue
		}
		res, err := v.run(ctx, st, dir, left, req.Progress)
		if err != nil {
			return nil, err
		}
		if res.TimedOut {
			res.Timeout = timeoutOf(req)
		}
		for i := range res.Outcome.Findings {
			res.Outcome.Findings[i].File = pl.place(res.Outcome.Findings[i].File)
		}
		r.add(res)
	}
	return r, nil
}

// resolve checks the path argument, as every path goes through the
// workspace: it must be a directory inside it, through whatever links.
// It returns the directory relative to the workspace and absolute (under
// the workspace directory as given, so tools print paths there).
func (v *Verifier) resolve(path string) (rel, abs string, err error) {
	if path == "" {
		path = "."
	}
	rel, err = v.ws.Rel(path)
	if err != nil {
		return "", "", err
	}
	fi, err := v.ws.Stat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !workspace.IsOutside(err) {
			return "", "", fmt.Errorf("path %q does not exist", path)
		}
		return "", "", fmt.Errorf("path %q: %w", path, err)
	}
	if !fi.IsDir() {
		return "", "", fmt.Errorf("path %q is not a directory", path)
	}
	abs = filepath.Join(v.ws.Dir(), rel)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", fmt.Errorf("path %q: %w", path, err)
	}
	// The root's Stat refuses links out, but the command runs at the
	// plain path, so where it leads is checked too.
	if _, err := v.ws.Rel(real); err != nil {
		return "", "", err
	}
	return rel, abs, nil
}

// checkPatterns refuses package patterns that would pass for flags or
// lead out of the workspace. Import paths ("example.com/app/...") are
// the go command's to resolve; file system patterns are checked here.
func (v *Verifier) checkPatterns(path string, patterns []string) error {
	for _, p := range patterns {
		switch {
		case p == "":
			return errors.New("empty package pattern")
		case strings.HasPrefix(p, "-"):
			return fmt.Errorf("package pattern %q starts with '-': flags are not accepted there", p)
		case strings.ContainsAny(p, "\x00\n"):
			return fmt.Errorf("package pattern %q holds a NUL or newline", p)
		}
		if !filepath.IsAbs(p) && p != "." && p != ".." && !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
			continue
		}
		target := p
		if !filepath.IsAbs(p) {
			base := path
			if base == "" {
				base = "."
			}
			target = filepath.Join(base, p)
		}
		if _, err := v.ws.Rel(target); err != nil {
			return fmt.Errorf("package pattern %q: %w", p, err)
		}
	}
	return nil
}
