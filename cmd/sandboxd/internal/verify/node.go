package verify

import (
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// NodeDetector recognizes a Node.js or TypeScript project by its
// package.json or tsconfig.json.
type NodeDetector struct{}

var nodeMarkers = []string{"package.json", "tsconfig.json"}

func (NodeDetector) Markers() []string { return nodeMarkers }

func (NodeDetector) Detect(ws *workspace.Workspace, dir string) (Project, bool, error) {
	m, err := firstMarker(ws, dir, nodeMarkers)
	if err != nil || m == "" {
		return nil, false, err
	}
	return nodeProject{dir: dir}, true, nil
}

type nodeProject struct{ dir string }

func (n nodeProject) Name() string { return projectName("Node.js project", n.dir) }

// debianNodePath is where Debian installs the modules its node-*
// packages (eslint's among them) require; a node not built by Debian
// does not look there.
const debianNodePath = "NODE_PATH=/usr/share/nodejs"

// Typecheck is tsc on the project's tsconfig.json, emitting nothing.
func (n nodeProject) Typecheck() []Step {
	return []Step{{
		Tool: "tsc", Command: "tsc", Args: []string{"--noEmit", "--pretty", "false", "-p", "."},
		Dir: n.dir, NewParser: newTscParser,
	}}
}

// Lint is eslint with its JSON formatter, over the JavaScript files;
// the project's own eslint configuration decides the rules.
func (n nodeProject) Lint() []Step {
	return []Step{{
		Tool: "eslint", Command: "eslint", Args: []string{"-f", "json", "--ext", ".js,.mjs,.cjs,.jsx", "."},
		Dir: n.dir, Env: []string{debianNodePath}, NewParser: newESLintParser,
	}}
}

// Test is node's own test runner with its JUnit reporter writing the
// report file; it finds the test files itself unless given some. The
// describe blocks around a test are its package.
func (n nodeProject) Test(opts TestOptions) []Step {
	args := []string{"--test", "--test-reporter=junit"}
	if opts.Run != "" {
		args = append(args, "--test-name-pattern="+opts.Run)
	}
	// node takes what follows "--" for the script's own arguments; the
	// Verifier refuses paths that start with "-".
	args = append(args, testPaths(opts)...)
	return []Step{{
		Tool: "node --test", Command: "node", Args: args,
		Dir: n.dir, ReportFlag: "--test-reporter-destination=", NewParser: newJUnitParser(true),
	}}
}
