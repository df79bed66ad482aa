package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/guard"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/shells"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// reply is what a tool returns: text, and an image for the agent to see.
type reply struct {
	text  string
	image []byte
	mime  string // the image's media type
}

// replyHandler turns a tool's body into an mcp-go handler: it tracks the
// call for shutdown, scrubs the result or the error, and reports the
// call to telemetry (metrics, its span, its log line). A tool's failure
// is a tool result with isError set, never a JSON-RPC error, so the
// agent sees the message. An SVG image is text, and scrubbed as text.
func (s *Server) replyHandler(name string, fn func(context.Context, mcp.CallToolRequest) (reply, error)) mcpserver.ToolHandlerFunc {
	s.tel.Metrics().Tool(name)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		session := sessionID(ctx)
		ctx, tc := s.tel.Start(ctx, name, session)
		ctx, end, err := s.calls.begin(ctx, session)
		if err != nil {
			tc.End(true, "")
			return mcp.NewToolResultError(err.Error()), nil
		}
		defer end()
		out, err := fn(ctx, req)
		if err != nil {
			tc.End(true, refusal(err))
			return mcp.NewToolResultError(s.scrubbed(err.Error())), nil
		}
		res := mcp.NewToolResultText(s.scrubbed(out.text))
		if out.image != nil {
			image := out.image
			if out.mime == diagram.SVG.MIME() {
				image = []byte(s.scrubbed(string(image)))
			}
			res.Content = append(res.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(image), out.mime))
		}
		tc.End(false, "")
		return res, nil
	}
}

// scrubbed is text scrubbed, its redactions counted: the marks scrubbing
// added (the tools that scrub as they go count their own).
func (s *Server) scrubbed(text string) string {
	out := s.scrub.String(text)
	if out != text {
		s.cfg.Metrics.Redacted(strings.Count(out, redactionMark) - strings.Count(text, redactionMark))
	}
	return out
}

// redactionMark starts every redaction shared/scrub writes.
const redactionMark = "[REDACTED:"

// refusal names the guard that refused a call, if one did: the denylist
// (a *guard.Refusal from Bash) or the workspace's containment (a
// *workspace.OutsideError from any tool that takes a path).
func refusal(err error) string {
	var denied *guard.Refusal
	switch {
	case errors.As(err, &denied):
		return telemetry.RefusedDenylist
	case workspace.IsOutside(err):
		return telemetry.RefusedPath
	}
	return ""
}

// registerTools adds the tools; read-only servers get only those that
// change nothing.
func (s *Server) registerTools(m *mcpserver.MCPServer) {
	ws := s.workspaceParam()
	addTool(s, m, mcp.NewTool("Read", append(ws,
		mcp.WithDescription("Read a file in the workspace. Returns numbered lines (cat -n style). Paths are absolute inside the workspace or relative to it. By default up to 2000 lines from the start; lines longer than 2000 characters are truncated. Binary files are refused."),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to read")),
		mcp.WithNumber("offset", mcp.Description("The line number to start reading from (1-based)")),
		mcp.WithNumber("limit", mcp.Description("The number of lines to read")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.read))
	addTool(s, m, mcp.NewTool("Glob", append(ws,
		mcp.WithDescription("Find files by glob pattern (doublestar: **, {a,b}), honouring .gitignore. Returns absolute paths, most recently modified first."),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("The glob pattern, e.g. **/*.go or src/**/*.{ts,tsx}")),
		mcp.WithString("path", mcp.Description("The directory to search in; default the workspace root")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.glob))
	addTool(s, m, mcp.NewTool("Grep", append(ws,
		mcp.WithDescription("Search file contents with ripgrep (Rust regex syntax), honouring .gitignore. output_mode: files_with_matches (default), content, or count."),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("The regular expression to search for")),
		mcp.WithString("path", mcp.Description("File or directory to search; default the workspace root")),
		mcp.WithString("glob", mcp.Description(`Only files matching this glob, e.g. "*.js" or "*.{ts,tsx}"; never includes gitignored files`)),
		mcp.WithString("type", mcp.Description("Only files of this ripgrep type, e.g. go, py, js")),
		mcp.WithString("output_mode", mcp.Enum("content", "files_with_matches", "count"), mcp.Description("content shows matching lines; files_with_matches lists files; count counts matches per file")),
		mcp.WithBoolean("-i", mcp.Description("Case-insensitive search")),
		mcp.WithBoolean("-n", mcp.Description("Show line numbers (content mode; default true)")),
		mcp.WithNumber("-A", mcp.Description("Lines of context after each match (content mode)")),
		mcp.WithNumber("-B", mcp.Description("Lines of context before each match (content mode)")),
		mcp.WithNumber("-C", mcp.Description("Lines of context around each match (content mode)")),
		mcp.WithBoolean("multiline", mcp.Description("Let patterns span lines; . matches newlines")),
		mcp.WithNumber("head_limit", mcp.Description("Only the first N lines or entries of the output")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.grep))
	s.registerSymbolTools(m, ws)
	s.registerLSPTools(m, ws)
	s.registerDiagramTools(m, ws)
	if s.cfg.ReadOnly {
		return
	}
	addTool(s, m, mcp.NewTool("Write", append(ws,
		mcp.WithDescription("Write a file in the workspace, atomically, creating parent directories. Overwriting an existing file requires having Read it in this session, and it must not have changed since. The file's mode is kept."+diagnosticsNote),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to write")),
		mcp.WithString("content", mcp.Required(), mcp.Description("The content to write")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.write))
	addTool(s, m, mcp.NewTool("Edit", append(ws,
		mcp.WithDescription("Replace an exact string in a file. old_string must occur exactly once unless replace_all is set. The file must have been Read in this session and not changed since."+diagnosticsNote),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to edit")),
		mcp.WithString("old_string", mcp.Required(), mcp.Description("The exact text to replace")),
		mcp.WithString("new_string", mcp.Required(), mcp.Description("The text to replace it with")),
		mcp.WithBoolean("replace_all", mcp.Description("Replace every occurrence")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.edit))
	addTool(s, m, mcp.NewTool("Bash", append(ws,
		mcp.WithDescription("Run a command with /bin/bash -c in the workspace, in its own process group, with empty stdin. The timeout kills the whole group. Output is capped, keeping its head and tail. With run_in_background the command's ID is returned at once: read its output with BashOutput, stop it with KillShell."+s.budgetNote("command")+" A small denylist refuses footguns such as sudo or mount; it is not the security boundary."),
		mcp.WithString("command", mcp.Required(), mcp.Description("The command to run")),
		mcp.WithNumber("timeout", mcp.Description("Timeout in milliseconds (default 120000, max 600000)")),
		mcp.WithString("description", mcp.Description("What the command does, in a few words")),
		mcp.WithBoolean("run_in_background", mcp.Description("Run in the background and return its shell ID")),
		secretsParam(),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.bash))
	addTool(s, m, mcp.NewTool("BashOutput", append(ws,
		mcp.WithDescription("Read what a background shell printed since the last read, stdout and stderr apart, with its status and exit code."+s.budgetNote("output")),
		mcp.WithString("bash_id", mcp.Required(), mcp.Description("The background shell's ID")),
		mcp.WithString("filter", mcp.Description("Only output lines matching this regular expression (others are consumed)")),
	)...), s.bashOutput)
	addTool(s, m, mcp.NewTool("KillShell", append(ws,
		mcp.WithDescription("Kill a background shell (or a watched process"+s.budgetNote("kill")+") and its whole process group: every process it started."),
		mcp.WithString("shell_id", mcp.Required(), mcp.Description("The background shell's ID")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), s.killShell)
	s.registerGoEditTools(m, ws)
	s.registerCoverageTools(m, ws)
	s.registerWatchTools(m, ws)
	s.registerSecretTools(m)
	s.registerVerifyTools(m, ws)
	s.registerSnapshotTools(m, ws)
}

const diagnosticsNote = " After the change, the file's package is checked (Go: go vet; Python: pyflakes; TypeScript: tsc; Rust: cargo check) and its problems follow as file:line:col: rule: message, within a time limit the result says when it hits."

// workspaceParam is the workspace argument, offered only when there is a
// choice to make.
func (s *Server) workspaceParam() []mcp.ToolOption {
	if len(s.spaces) < 2 {
		return nil
	}
	return []mcp.ToolOption{mcp.WithString("workspace", mcp.Enum(s.names...),
		mcp.Description("Which workspace the call is for"))}
}

type readArgs struct {
	inWorkspace
	FilePath string `json:"file_path" mcp:"required"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

func (s *Server) read(ctx context.Context, sp *space, a readArgs) (string, error) {
	return sp.files.Read(s.ledger(ctx), a.FilePath, a.Offset, a.Limit)
}

type writeArgs struct {
	inWorkspace
	FilePath string `json:"file_path" mcp:"required"`
	Content  string `json:"content" mcp:"required"`
}

func (s *Server) write(ctx context.Context, sp *space, a writeArgs) (string, error) {
	defer s.lspChanged(sp, a.FilePath)
	out, err := sp.files.Write(s.ledger(ctx), a.FilePath, a.Content)
	if err != nil {
		return "", err
	}
	out += s.diagnoseChanged(ctx, sp, a.FilePath)
	return out, nil
}

type editArgs struct {
	inWorkspace
	FilePath   string `json:"file_path" mcp:"required"`
	OldString  string `json:"old_string" mcp:"required"`
	NewString  string `json:"new_string" mcp:"required"`
	ReplaceAll bool   `json:"replace_all"`
}

func (s *Server) edit(ctx context.Context, sp *space, a editArgs) (string, error) {
	defer s.lspChanged(sp, a.FilePath)
	out, err := sp.files.Edit(s.ledger(ctx), a.FilePath, a.OldString, a.NewString, a.ReplaceAll)
	if err != nil {
		return "", err
	}
	out += s.diagnoseChanged(ctx, sp, a.FilePath)
	return out, nil
}

type globArgs struct {
	inWorkspace
	Pattern string `json:"pattern" mcp:"required"`
	Path    string `json:"path"`
}

func (s *Server) glob(ctx context.Context, sp *space, a globArgs) (string, error) {
	return sp.search.Glob(ctx, a.Pattern, a.Path)
}

type grepArgs struct {
	inWorkspace
	Pattern     string `json:"pattern" mcp:"required"`
	Path        string `json:"path"`
	Glob        string `json:"glob"`
	Type        string `json:"type"`
	OutputMode  string `json:"output_mode"`
	IgnoreCase  bool   `json:"-i"`
	LineNumbers *bool  `json:"-n"` // default true, as agents expect line numbers
	After       int    `json:"-A"`
	Before      int    `json:"-B"`
	Context     int    `json:"-C"`
	Multiline   bool   `json:"multiline"`
	HeadLimit   int    `json:"head_limit"`
}

func (s *Server) grep(ctx context.Context, sp *space, a grepArgs) (string, error) {
	return sp.search.Grep(ctx, a.request())
}

func (a grepArgs) request() search.GrepRequest {
	return search.GrepRequest{
		Pattern:     a.Pattern,
		Path:        a.Path,
		Glob:        a.Glob,
		Type:        a.Type,
		OutputMode:  a.OutputMode,
		IgnoreCase:  a.IgnoreCase,
		LineNumbers: a.LineNumbers == nil || *a.LineNumbers,
		Before:      a.Before,
		After:       a.After,
		Context:     a.Context,
		Multiline:   a.Multiline,
		HeadLimit:   a.HeadLimit,
	}
}

type bashArgs struct {
	inWorkspace
	Command         string  `json:"command" mcp:"required"`
	Timeout         float64 `json:"timeout"`
	Description     string  `json:"description"`
	RunInBackground bool    `json:"run_in_background"`
	withSecrets
}

func (s *Server) bash(ctx context.Context, sp *space, a bashArgs) (string, error) {
	if a.Timeout < 0 {
		return "", fmt.Errorf("timeout %v: want milliseconds, at least 0", a.Timeout)
	}
	env, err := s.callSecrets(a.Secrets)
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp) // a command may change any file
	return sp.shells.Bash(ctx, shells.Command{
		Command:     a.Command,
		Timeout:     time.Duration(a.Timeout * float64(time.Millisecond)),
		Description: a.Description,
		Background:  a.RunInBackground,
		Owner:       sessionID(ctx),
		Env:         env,
	})
}

type bashOutputArgs struct {
	inWorkspace
	BashID string `json:"bash_id" mcp:"required"`
	Filter string `json:"filter"`
}

// A background shell is its session's: another session's BashOutput and
// KillShell get "no such shell", and the session's end kills it.
func (s *Server) bashOutput(ctx context.Context, a bashOutputArgs) (string, error) {
	owner := sessionID(ctx)
	sp, err := s.shellSpace(a.Workspace, owner, a.BashID)
	if err != nil {
		return "", err
	}
	return sp.shells.Output(owner, a.BashID, a.Filter)
}

type killShellArgs struct {
	inWorkspace
	ShellID string `json:"shell_id" mcp:"required"`
}

func (s *Server) killShell(ctx context.Context, a killShellArgs) (string, error) {
	owner := sessionID(ctx)
	sp, err := s.shellSpace(a.Workspace, owner, a.ShellID)
	if err != nil {
		return "", err
	}
	return sp.shells.Kill(owner, a.ShellID)
}

// shellSpace is the workspace a background shell runs in: the one the
// call names, else whichever holds the ID, so an agent need not repeat
// the workspace for every read. An ID no workspace holds goes to the
// first, whose answer says it is unknown.
func (s *Server) shellSpace(name, owner, id string) (*space, error) {
	if name != "" {
		return s.space(name)
	}
	for _, name := range s.names {
		if s.spaces[name].shells.Has(owner, id) {
			return s.spaces[name], nil
		}
	}
	return s.spaces[s.names[0]], nil
}
