package verify

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// GoDetector recognizes a Go module by its go.mod.
type GoDetector struct{}

func (GoDetector) Markers() []string { return []string{"go.mod"} }

func (GoDetector) Detect(ws *workspace.Workspace, dir string) (Project, bool, error) {
	gomod := filepath.Join(dir, "go.mod")
	ok, err := isFile(ws, gomod)
	if err != nil || !ok {
		return nil, false, err
	}
	f, err := ws.Open(gomod)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", gomod, err)
	}
	defer f.Close()
	return goProject{module: modulePath(f), dir: dir}, true, nil
}

// modulePath reads the module directive, for the summary only; a go.mod
// it cannot read is still a Go project, and go will say what is wrong.
func modulePath(r io.Reader) string {
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			if p, err := strconv.Unquote(fields[1]); err == nil {
				return p
			}
			return fields[1]
		}
	}
	return ""
}

type goProject struct {
	module string
	dir    string // workspace-relative directory of go.mod
}

func (g goProject) Name() string {
	name := "Go module"
	if g.module != "" {
		name += " " + g.module
	}
	if g.dir != "." {
		name += " in " + filepath.ToSlash(g.dir)
	}
	return name
}

// Typecheck compiles every package and its tests without running
// anything. go build skips _test.go files and go vet's type checker stops
// at a package's first error, so this is go test with the test binaries
// "run" by true: the compiler type-checks test files and reports every
// error, -json ties each to its package, and no user code (TestMain,
// init) runs. -vet=off keeps lint findings out of the typecheck.
func (g goProject) Typecheck() []Step {
	return []Step{{
		Tool:      "go test (compile only)",
		Command:   "go",
		Args:      []string{"test", "-json", "-vet=off", "-run=^$", "-exec=true", "./..."},
		NewParser: newGoTestParser(false),
	}}
}

// Lint runs go vet, and staticcheck when it is installed.
func (g goProject) Lint() []Step {
	return []Step{{
		Tool:      "go vet",
		Command:   "go",
		Args:      []string{"vet", "-json", "./..."},
		NewParser: newVetParser,
	}, {
		Tool:      "staticcheck",
		Command:   "staticcheck",
		Args:      []string{"-f", "json", "./..."},
		Optional:  true,
		NewParser: newStaticcheckParser,
	}}
}

// Test runs go test afresh (-count=1: an agent asking for a run wants
// one, not a cached result), with file names in full (-fullpath) so a
// test's log lines can be placed in the workspace, and go test's own
// per-binary timeout raised to the call's, which it would otherwise cut
// at 10 minutes.
func (g goProject) Test(opts TestOptions) []Step {
	args := []string{"test", "-json", "-count=1", "-fullpath"}
	if opts.Timeout > 0 {
		args = append(args, "-timeout="+opts.Timeout.String())
	}
	if opts.Run != "" {
		args = append(args, "-run="+opts.Run)
	}
	// go test has no "--": the Verifier refuses patterns that start
	// with "-", so none can pass for a flag.
	args = append(args, opts.Packages...)
	return []Step{{
		Tool:      "go test",
		Command:   "go",
		Args:      args,
		NewParser: newGoTestParser(true),
	}}
}
