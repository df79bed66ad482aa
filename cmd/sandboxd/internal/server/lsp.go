package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/files"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/lsp"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/shells"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

const lspSymbolArgs = ` The symbol is found by name in file_path — on line when given, else where the file declares it, else its first use; comments and strings do not count. Paths in the answer are relative to the workspace, as path:line:col: text (col counts characters from 1). Go files are answered by gopls, Python files by pylsp, each started on first use.`

// registerLSPTools adds find_definition and find_references, which
// change nothing, and rename_symbol, which read-only servers lack.
func (s *Server) registerLSPTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	common := func(opts ...mcp.ToolOption) []mcp.ToolOption {
		all := append(slices.Clone(ws), opts...)
		return append(all,
			mcp.WithString("symbol", mcp.Required(), mcp.Description("The symbol's name, e.g. ParseConfig, or Type.Method to prefer lines naming Type")),
			mcp.WithString("file_path", mcp.Required(), mcp.Description("A file in which the symbol occurs (its declaration or any use)")),
			mcp.WithNumber("line", mcp.Description("The 1-based line of the occurrence to start from, when the file has several")),
		)
	}
	addTool(s, m, mcp.NewTool("find_definition", common(
		mcp.WithDescription("Find where a symbol is defined, with the language server (go to definition)."+lspSymbolArgs),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.findDefinition))
	addTool(s, m, mcp.NewTool("find_references", common(
		mcp.WithDescription(fmt.Sprintf("Find every use of a symbol across the project, its declaration included, with the language server; at most %d are listed.", lsp.DefaultMaxResults)+lspSymbolArgs),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.findReferences))
	if s.cfg.ReadOnly {
		return
	}
	addTool(s, m, mcp.NewTool("rename_symbol", common(
		mcp.WithDescription("Rename a symbol everywhere it is used, with the language server, and write the changed files: all of them or, on any failure, none. Edits outside the workspace are refused. The changed files may be Edited next without a Read."+lspSymbolArgs),
		mcp.WithString("new_name", mcp.Required(), mcp.Description("The symbol's new name")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.renameSymbol))
}

// newLSP is a workspace's language servers, run as its shells are: same
// environment, same user. A running shell may change files unseen, so
// the servers then look at every file before answering.
func newLSP(ws *workspace.Workspace, sh *shells.Manager, env []string, runAs *syscall.Credential) *lsp.Manager {
	return lsp.New(ws, lsp.Options{Env: env, Credential: runAs, Unsettled: func() bool { return sh.Active() > 0 }})
}

// lspChanged tells sp's language servers that files changed: paths as
// the agent gave them, or none when anything may have (a shell ran).
// Every tool that changes files calls it.
func (s *Server) lspChanged(sp *space, paths ...string) {
	sp.lsp.Changed(paths...)
}

// lspArgs are the arguments of find_definition and find_references,
// and with new_name of rename_symbol: the symbol to look up.
type lspArgs struct {
	inWorkspace
	Symbol   string `json:"symbol" mcp:"required"`
	FilePath string `json:"file_path" mcp:"required"`
	Line     int    `json:"line"`
}

func (a lspArgs) query() (lsp.Query, error) {
	if a.Line < 0 {
		return lsp.Query{}, fmt.Errorf("line %d: want a 1-based line number", a.Line)
	}
	return lsp.Query{File: a.FilePath, Symbol: a.Symbol, Line: a.Line}, nil
}

type renameArgs struct {
	lspArgs
	NewName string `json:"new_name" mcp:"required"`
}

func (s *Server) findDefinition(ctx context.Context, sp *space, args lspArgs) (string, error) {
	q, err := args.query()
	if err != nil {
		return "", err
	}
	a, err := sp.lsp.Definition(ctx, q)
	if err != nil {
		return "", fmt.Errorf("find_definition: %w", err)
	}
	if a.Total == 0 {
		return "", fmt.Errorf("find_definition: the language server knows no definition of %s at %s", q.Symbol, a.At)
	}
	return answerText(fmt.Sprintf("Definition of %s (from %s):", q.Symbol, place(a.At)), a), nil
}

func (s *Server) findReferences(ctx context.Context, sp *space, args lspArgs) (string, error) {
	q, err := args.query()
	if err != nil {
		return "", err
	}
	a, err := sp.lsp.References(ctx, q)
	if err != nil {
		return "", fmt.Errorf("find_references: %w", err)
	}
	if a.Total == 0 {
		return "", fmt.Errorf("find_references: the language server knows no references to %s at %s", q.Symbol, a.At)
	}
	return answerText(fmt.Sprintf("%s to %s (from %s):", count(a.Total, "reference"), q.Symbol, place(a.At)), a), nil
}

func (s *Server) renameSymbol(ctx context.Context, sp *space, a renameArgs) (string, error) {
	q, err := a.query()
	if err != nil {
		return "", err
	}
	plan, err := sp.lsp.Rename(ctx, q, a.NewName)
	if err != nil {
		return "", fmt.Errorf("rename_symbol: %w", err)
	}
	changes := make([]files.Change, len(plan.Files))
	paths := make([]string, len(plan.Files))
	for i, f := range plan.Files {
		changes[i] = files.Change{Path: f.Path, Old: f.Old, New: f.New}
		paths[i] = f.Path
	}
	err = sp.files.Apply(s.ledger(ctx), changes)
	s.lspChanged(sp, paths...)
	if err != nil {
		return "", fmt.Errorf("rename_symbol: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Renamed %s to %s (from %s): %s in %s\n", q.Symbol, a.NewName, place(plan.At), count(plan.Edits, "edit"), count(len(plan.Files), "file"))
	for _, f := range plan.Files {
		fmt.Fprintf(&b, "%s (%s)\n", f.Path, count(f.Edits, "edit"))
	}
	if plan.Note != "" {
		fmt.Fprintf(&b, "Note: %s\n", plan.Note)
	}
	// Like Write and Edit, the files it changed are checked.
	return strings.TrimSuffix(b.String(), "\n") + s.diagnoseChanged(ctx, sp, paths...), nil
}

// place is a Ref without its text.
func place(r lsp.Ref) string { return fmt.Sprintf("%s:%d:%d", r.Path, r.Line, r.Col) }

// answerText is a header, one line per place, and what was left out.
func answerText(header string, a lsp.Answer) string {
	var b strings.Builder
	b.WriteString(header)
	for _, r := range a.Refs {
		b.WriteString("\n")
		b.WriteString(r.String())
	}
	if a.Total > len(a.Refs) {
		fmt.Fprintf(&b, "\n(%d more not shown)", a.Total-len(a.Refs))
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "\nNote: %s", a.Note)
	}
	return b.String()
}

// count is n and word, made plural when n is not 1.
func count(n int, word string) string {
	return fmt.Sprintf("%d %s", n, plural(n, word, word+"s"))
}
