package verify

import (
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// RustDetector recognizes a Cargo package or workspace by its Cargo.toml.
type RustDetector struct{}

func (RustDetector) Markers() []string { return []string{"Cargo.toml"} }

func (RustDetector) Detect(ws *workspace.Workspace, dir string) (Project, bool, error) {
	m, err := firstMarker(ws, dir, []string{"Cargo.toml"})
	if err != nil || m == "" {
		return nil, false, err
	}
	return rustProject{dir: dir}, true, nil
}

type rustProject struct{ dir string }

func (r rustProject) Name() string { return projectName("Rust crate", r.dir) }

// cargoArgs are every cargo command's: JSON diagnostics, and no network
// (no registry is reachable, and a check must not fetch what it builds).
func cargoArgs(sub string, more ...string) []string {
	return append([]string{sub, "--offline", "--message-format=json"}, more...)
}

// Typecheck is cargo check of every target, tests included.
func (r rustProject) Typecheck() []Step {
	return []Step{{
		Tool: "cargo check", Command: "cargo", Args: cargoArgs("check", "--all-targets"),
		Dir: r.dir, NewParser: newCargoParser(false),
	}}
}

// Lint is clippy over every target.
func (r rustProject) Lint() []Step {
	return []Step{{
		Tool: "cargo clippy", Command: "cargo", Args: cargoArgs("clippy", "--all-targets"),
		Dir: r.dir, NewParser: newCargoParser(false),
	}}
}

// Test runs cargo test; compile errors come as JSON, the test binaries'
// reports as libtest's text. Run filters tests by name (a substring, as
// libtest takes it); no-fail-fast runs every test binary even when one
// fails.
func (r rustProject) Test(opts TestOptions) []Step {
	args := cargoArgs("test", "--no-fail-fast")
	for _, p := range testPaths(opts) {
		args = append(args, "--package", p)
	}
	if opts.Run != "" {
		args = append(args, "--", opts.Run)
	}
	return []Step{{
		Tool: "cargo test", Command: "cargo", Args: args,
		Dir: r.dir, NewParser: newCargoParser(true),
	}}
}
