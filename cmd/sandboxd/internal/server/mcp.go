package server

import (
	"context"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// sessionIdleTTL forgets a Streamable HTTP session (and what it has read)
// that has been silent this long; clients that vanish without a DELETE
// would otherwise hold their ledgers forever.
const sessionIdleTTL = 2 * time.Hour

const instructions = `sandboxd executes file, search and shell operations inside a workspace, and runs the project's tests, linters and type checker (run_tests, run_lint, run_typecheck). ` +
	`Paths are absolute inside the workspace or relative to it; nothing outside it is reachable. ` +
	`Read a file before you Write or Edit it. Output is scrubbed of secrets.`

func (s *Server) newMCP() *mcpserver.MCPServer {
	hooks := &mcpserver.Hooks{}
	hooks.AddOnUnregisterSession(func(_ context.Context, session mcpserver.ClientSession) {
		s.forget(session.SessionID())
	})
	m := mcpserver.NewMCPServer("sandboxd", s.cfg.Version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithRecovery(),
		mcpserver.WithHooks(hooks),
		mcpserver.WithInstructions(instructions+s.budgetInstructions()),
	)
	s.registerTools(m)
	return m
}
