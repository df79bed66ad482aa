// Package files is the Read, Write and Edit tools of sandboxd, the file
// tools a coding agent knows from Claude Code, as a plain Go API for the
// MCP server to expose.
//
// Every path goes through a workspace.Workspace, so no tool reaches a file
// outside the workspace root, whatever "..", absolute path or symlink it
// is given; such a path fails with an error that wraps a
// *workspace.OutsideError.
//
// Read numbers lines as cat -n does and bounds what it returns (lines,
// line length, bytes), so one call cannot flood the agent's context.
// Write and Edit only change a file the same session has read, through a
// Ledger, and refuse when its content changed since: an agent must not
// overwrite what it has not seen, nor work from a stale copy of a file
// that a build, a formatter or another session rewrote meanwhile.
package files
