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

// toolFunc is a tool's body; what it returns is scrubbed by the caller.
type toolFunc func(ctx context.Context, req mcp.CallToolRequest) (string, error)

// spaceFunc is the body of a tool that works in one workspace, already
// picked.
type spaceFunc func(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error)

// inSpace picks the workspace the call names (or the only one) for fn.
func (s *Server) inSpace(fn spaceFunc) toolFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (string, error) {
		sp, err := s.space(req.GetString("workspace", ""))
		if err != nil {
			return "", err
		}
		return fn(ctx, sp, req)
	}
}

// handler turns a toolFunc into an mcp-go handler (see replyHandler).
func (s *Server) handler(name string, fn toolFunc) mcpserver.ToolHandlerFunc {
	return s.replyHandler(name, func(ctx context.Context, req mcp.CallToolRequest) (reply, error) {
		text, err := fn(ctx, req)
		return reply{text: text}, err
	})
}

// reply is what a tool returns: text, and an image for the agent to see.
type reply struct {
	text  string
	image []byte
	mime  string // the image's media type
}

// replyFunc is the body of a tool that may return an image.
type replyFunc func(ctx context.Context, req mcp.CallToolRequest) (reply, error)

// replyHandler turns a replyFunc into an mcp-go handler: it tracks the
// call for shutdown, scrubs the result or the error, and reports the
// call to telemetry (metrics, its span, its log line). A tool's failure
// is a tool result with isError set, never a JSON-RPC error, so the
// agent sees the message. An SVG image is text, and scrubbed as text.
func (s *Server) replyHandler(name string, fn replyFunc) mcpserver.ToolHandlerFunc {
	s.tel.Metrics().Tool(name)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, tc := s.tel.Start(ctx, name, sessionID(ctx))
		ctx, end, err := s.calls.begin(ctx)
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
	m.AddTool(mcp.NewTool("Read", append(ws,
		mcp.WithDescription("Read a file in the workspace. Returns numbered lines (cat -n style). Paths are absolute inside the workspace or relative to it. By default up to 2000 lines from the start; lines longer than 2000 characters are truncated. Binary files are refused."),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to read")),
		mcp.WithNumber("offset", mcp.Description("The line number to start reading from (1-based)")),
		mcp.WithNumber("limit", mcp.Description("The number of lines to read")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), s.handler("Read", s.inSpace(s.read)))
	m.AddTool(mcp.NewTool("Glob", append(ws,
		mcp.WithDescription("Find files by glob pattern (doublestar: **, {a,b}), honouring .gitignore. Returns absolute paths, most recently modified first."),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("The glob pattern, e.g. **/*.go or src/**/*.{ts,tsx}")),
		mcp.WithString("path", mcp.Description("The directory to search in; default the workspace root")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), s.handler("Glob", s.inSpace(s.glob)))
	m.AddTool(mcp.NewTool("Grep", append(ws,
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
	)...), s.handler("Grep", s.inSpace(s.grep)))
	s.registerSymbolTools(m, ws)
	s.registerLSPTools(m, ws)
	s.registerDiagramTools(m, ws)
	if s.cfg.ReadOnly {
		return
	}
	m.AddTool(mcp.NewTool("Write", append(ws,
		mcp.WithDescription("Write a file in the workspace, atomically, creating parent directories. Overwriting an existing file requires having Read it in this session, and it must not have changed since. The file's mode is kept."+diagnosticsNote),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to write")),
		mcp.WithString("content", mcp.Required(), mcp.Description("The content to write")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), s.handler("Write", s.inSpace(s.write)))
	m.AddTool(mcp.NewTool("Edit", append(ws,
		mcp.WithDescription("Replace an exact string in a file. old_string must occur exactly once unless replace_all is set. The file must have been Read in this session and not changed since."+diagnosticsNote),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The file to edit")),
		mcp.WithString("old_string", mcp.Required(), mcp.Description("The exact text to replace")),
		mcp.WithString("new_string", mcp.Required(), mcp.Description("The text to replace it with")),
		mcp.WithBoolean("replace_all", mcp.Description("Replace every occurrence")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), s.handler("Edit", s.inSpace(s.edit)))
	m.AddTool(mcp.NewTool("Bash", append(ws,
		mcp.WithDescription("Run a command with /bin/bash -c in the workspace, in its own process group, with empty stdin. The timeout kills the whole group. Output is capped, keeping its head and tail. With run_in_background the command's ID is returned at once: read its output with BashOutput, stop it with KillShell. A small denylist refuses footguns such as sudo or mount; it is not the security boundary."),
		mcp.WithString("command", mcp.Required(), mcp.Description("The command to run")),
		mcp.WithNumber("timeout", mcp.Description("Timeout in milliseconds (default 120000, max 600000)")),
		mcp.WithString("description", mcp.Description("What the command does, in a few words")),
		mcp.WithBoolean("run_in_background", mcp.Description("Run in the background and return its shell ID")),
		secretsParam(),
		mcp.WithDestructiveHintAnnotation(true),
	)...), s.handler("Bash", s.inSpace(s.bash)))
	m.AddTool(mcp.NewTool("BashOutput", append(ws,
		mcp.WithDescription("Read what a background shell printed since the last read, stdout and stderr apart, with its status and exit code."),
		mcp.WithString("bash_id", mcp.Required(), mcp.Description("The background shell's ID")),
		mcp.WithString("filter", mcp.Description("Only output lines matching this regular expression (others are consumed)")),
	)...), s.handler("BashOutput", s.bashOutput))
	m.AddTool(mcp.NewTool("KillShell", append(ws,
		mcp.WithDescription("Kill a background shell (or a watched process) and its whole process group."),
		mcp.WithString("shell_id", mcp.Required(), mcp.Description("The background shell's ID")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), s.handler("KillShell", s.killShell))
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

func (s *Server) read(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	path, err := req.RequireString("file_path")
	if err != nil {
		return "", err
	}
	return sp.files.Read(s.ledger(ctx), path, req.GetInt("offset", 0), req.GetInt("limit", 0))
}

func (s *Server) write(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	path, err := req.RequireString("file_path")
	if err != nil {
		return "", err
	}
	content, err := req.RequireString("content")
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp, path)
	out, err := sp.files.Write(s.ledger(ctx), path, content)
	if err != nil {
		return "", err
	}
	out += s.diagnoseChanged(ctx, sp, path)
	return out, nil
}

func (s *Server) edit(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	path, err := req.RequireString("file_path")
	if err != nil {
		return "", err
	}
	oldString, err := req.RequireString("old_string")
	if err != nil {
		return "", err
	}
	newString, err := req.RequireString("new_string")
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp, path)
	out, err := sp.files.Edit(s.ledger(ctx), path, oldString, newString, req.GetBool("replace_all", false))
	if err != nil {
		return "", err
	}
	out += s.diagnoseChanged(ctx, sp, path)
	return out, nil
}

func (s *Server) glob(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	pattern, err := req.RequireString("pattern")
	if err != nil {
		return "", err
	}
	return sp.search.Glob(ctx, pattern, req.GetString("path", ""))
}

func (s *Server) grep(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	g, err := grepRequest(req)
	if err != nil {
		return "", err
	}
	return sp.search.Grep(ctx, g)
}

// grepRequest reads Grep's arguments; -n defaults to true, as agents
// expect line numbers.
func grepRequest(req mcp.CallToolRequest) (search.GrepRequest, error) {
	pattern, err := req.RequireString("pattern")
	if err != nil {
		return search.GrepRequest{}, err
	}
	return search.GrepRequest{
		Pattern:     pattern,
		Path:        req.GetString("path", ""),
		Glob:        req.GetString("glob", ""),
		Type:        req.GetString("type", ""),
		OutputMode:  req.GetString("output_mode", ""),
		IgnoreCase:  req.GetBool("-i", false),
		LineNumbers: req.GetBool("-n", true),
		Before:      req.GetInt("-B", 0),
		After:       req.GetInt("-A", 0),
		Context:     req.GetInt("-C", 0),
		Multiline:   req.GetBool("multiline", false),
		HeadLimit:   req.GetInt("head_limit", 0),
	}, nil
}

func (s *Server) bash(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	command, err := req.RequireString("command")
	if err != nil {
		return "", err
	}
	ms := req.GetFloat("timeout", 0)
	if ms < 0 {
		return "", fmt.Errorf("timeout %v: want milliseconds, at least 0", ms)
	}
	env, err := s.callSecrets(req)
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp) // a command may change any file
	return sp.shells.Bash(ctx, shells.Command{
		Command:     command,
		Timeout:     time.Duration(ms * float64(time.Millisecond)),
		Description: req.GetString("description", ""),
		Background:  req.GetBool("run_in_background", false),
		Owner:       sessionID(ctx),
		Env:         env,
	})
}

// A background shell is its session's: another session's BashOutput and
// KillShell get "no such shell", and the session's end kills it.
func (s *Server) bashOutput(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	id, err := req.RequireString("bash_id")
	if err != nil {
		return "", err
	}
	owner := sessionID(ctx)
	sp, err := s.shellSpace(req, owner, id)
	if err != nil {
		return "", err
	}
	return sp.shells.Output(owner, id, req.GetString("filter", ""))
}

func (s *Server) killShell(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	id, err := req.RequireString("shell_id")
	if err != nil {
		return "", err
	}
	owner := sessionID(ctx)
	sp, err := s.shellSpace(req, owner, id)
	if err != nil {
		return "", err
	}
	return sp.shells.Kill(owner, id)
}

// shellSpace is the workspace a background shell runs in: the one the
// call names, else whichever holds the ID, so an agent need not repeat
// the workspace for every read. An ID no workspace holds goes to the
// first, whose answer says it is unknown.
func (s *Server) shellSpace(req mcp.CallToolRequest, owner, id string) (*space, error) {
	if name := req.GetString("workspace", ""); name != "" {
		return s.space(name)
	}
	for _, name := range s.names {
		if s.spaces[name].shells.Has(owner, id) {
			return s.spaces[name], nil
		}
	}
	return s.spaces[s.names[0]], nil
}
