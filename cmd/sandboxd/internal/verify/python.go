package verify

import (
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// DefaultPython is the interpreter pytest runs under: Debian's, which
// has the python3-* packages installed, rather than whichever python3
// comes first on the PATH (a pyenv shim, a virtualenv) and may lack them.
const DefaultPython = "/usr/bin/python3"

// PythonDetector recognizes a Python project by its packaging or test
// configuration.
type PythonDetector struct {
	// Python is the interpreter that runs pytest; empty is DefaultPython.
	Python string
}

var pythonMarkers = []string{"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini"}

func (PythonDetector) Markers() []string { return pythonMarkers }

func (d PythonDetector) Detect(ws *workspace.Workspace, dir string) (Project, bool, error) {
	m, err := firstMarker(ws, dir, pythonMarkers)
	if err != nil || m == "" {
		return nil, false, err
	}
	python := d.Python
	if python == "" {
		python = DefaultPython
	}
	return pythonProject{dir: dir, python: python}, true, nil
}

type pythonProject struct {
	dir    string
	python string
}

func (p pythonProject) Name() string { return projectName("Python project", p.dir) }

// Typecheck runs mypy over the project, with no cache, which it would
// otherwise write into the workspace.
func (p pythonProject) Typecheck() []Step {
	return []Step{{
		Tool:    "mypy",
		Command: "mypy",
		Args: []string{"--show-column-numbers", "--show-error-codes", "--no-error-summary",
			"--no-color-output", "--no-pretty", "--cache-dir=/dev/null", "."},
		Dir:       p.dir,
		NewParser: newMypyParser,
	}}
}

// Lint runs flake8, which holds pyflakes' checks and pycodestyle's.
func (p pythonProject) Lint() []Step {
	return []Step{{
		Tool:      "flake8",
		Command:   "flake8",
		Args:      []string{"."},
		Dir:       p.dir,
		NewParser: newFlake8Parser,
	}}
}

// Test runs pytest from the project's root, where it finds its
// configuration, and reads its JUnit report. xunit1 is the report
// format that gives each test's file and line; the cache provider is
// off so the run writes nothing into the workspace.
func (p pythonProject) Test(opts TestOptions) []Step {
	args := []string{"-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"}
	if opts.Run != "" {
		args = append(args, "-k", opts.Run)
	}
	// pytest has "--": paths after it are never taken for options.
	if paths := testPaths(opts); len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return []Step{{
		Tool:       "pytest",
		Command:    p.python,
		Args:       args,
		Dir:        p.dir,
		ReportFlag: "--junitxml=",
		NewParser:  newJUnitParser(false),
	}}
}
