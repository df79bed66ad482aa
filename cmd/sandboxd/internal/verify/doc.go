// Package verify is sandboxd's run_tests, run_lint and run_typecheck: it
// finds out what kind of project a workspace directory holds, runs that
// project's own test, lint and typecheck commands, and turns their output
// into findings an agent can act on, one per line as
// "file:line:col: rule: message" with paths relative to the workspace.
//
// A Detector recognizes a project type by its marker file (go.mod for Go,
// Cargo.toml for Rust, pyproject.toml and the like for Python,
// package.json or tsconfig.json for Node.js) in the directory asked for or
// one above it, up to the workspace root; the nearest wins. The Project it
// returns describes each check as Steps: a command and a Parser for its
// output, which may be a report file the tool writes (JUnit XML).
//
// Diagnose is the quick check of the files an edit changed: one fast
// checker per language, on the file's package or module only, its
// findings kept to the changed files.
//
// Commands run through shared/shell: in their own process group, with
// empty stdin, exactly the environment the Verifier was given, and a
// timeout that kills the whole group. Output is parsed as it streams,
// line by line, with every line, every finding and the number of findings
// kept bounded, so neither a chatty test suite nor hostile output can
// grow memory without limit, and no input makes a parser panic. When a
// command fails and nothing in its output could be parsed, the tail of
// the raw output is shown instead, so a failure is never unexplained.
//
// The parsers' regular expressions are compiled on first use
// (sync.OnceValue), not in the package initialiser: every sandboxd start
// paid 0.7 ms for them, most never running a check (issue 34).
package verify
