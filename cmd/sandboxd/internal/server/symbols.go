package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/symbols"
)

// registerSymbolTools adds search_code, which only reads.
func (s *Server) registerSymbolTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	addTool(s, m, mcp.NewTool("search_code", append(ws,
		mcp.WithDescription("Find where symbols are defined (functions, methods, types, variables, constants...) in the workspace's Go, Python, Rust, TypeScript and JavaScript files, by name: case-insensitive, exact matches first, then prefixes, then substrings. One per line: path:line: kind Scope.Name(signature), paths relative to the workspace. Files git would ignore are left out; the index follows every change to the files."),
		mcp.WithString("query", mcp.Required(), mcp.Description("The name, or part of it")),
		mcp.WithString("kind", mcp.Description("Only symbols of this kind: "+strings.Join(symbols.Kinds, ", ")+" (type takes struct, class, interface, enum and type)")),
		mcp.WithNumber("limit", mcp.Description(fmt.Sprintf("At most this many symbols (default %d, max %d)", symbols.DefaultLimit, symbols.MaxLimit))),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.searchCode))
}

type searchCodeArgs struct {
	inWorkspace
	Query string `json:"query" mcp:"required"`
	Kind  string `json:"kind"`
	Limit int    `json:"limit"`
}

func (s *Server) searchCode(ctx context.Context, sp *space, a searchCodeArgs) (string, error) {
	return sp.symbols.Search(ctx, a.Query, a.Kind, a.Limit)
}
