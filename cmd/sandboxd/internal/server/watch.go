package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/shells"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
)

// maxIdleTimeout bounds watch_process's idle_timeout.
const maxIdleTimeout = time.Hour

// registerWatchTools adds watch_process and watch_process_events. A
// watched process is a background shell: BashOutput reads it and
// KillShell stops it.
func (s *Server) registerWatchTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	addTool(s, m, mcp.NewTool("watch_process", append(ws,
		mcp.WithDescription(fmt.Sprintf("Start a long-running command (a dev server, a watcher) as a background shell and watch it: every line of its stdout and stderr is matched against error_patterns, and matches, silences and its exit become events read with watch_process_events. Returns its shell ID; BashOutput reads its full output and KillShell stops it with its whole process tree. Lines are cut at %d bytes. Checked like Bash; at most a few watched processes run at once.", watch.DefaultMaxLine)),
		mcp.WithString("command", mcp.Required(), mcp.Description("The command to run with /bin/bash -c in the workspace")),
		mcp.WithArray("error_patterns", mcp.WithStringItems(), mcp.Description(fmt.Sprintf("Go regular expressions (RE2); a line matching any is a match event naming the first that matched. At most %d, each at most %d bytes", watch.MaxPatterns, watch.MaxPatternLen))),
		mcp.WithNumber("idle_timeout", mcp.Description(fmt.Sprintf("Milliseconds of silence (nothing printed on either stream) that make an idle event, once per silence, from the start for a process that never prints; 0 or absent means none; at most %d", maxIdleTimeout.Milliseconds()))),
		mcp.WithString("description", mcp.Description("What the command does, in a few words")),
		secretsParam(),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.watchProcess))
	addTool(s, m, mcp.NewTool("watch_process_events", append(ws,
		mcp.WithDescription("Read a watched process's events after since_event_id, as JSON: {shell_id, status, events: [{id, kind: match|idle|exit, time, stream, line_number, line, truncated, pattern, silent_ms, exit_code, status}], dropped (events after since_event_id the ring no longer holds), more (ask again after the last id), last_event_id, exited}."),
		mcp.WithString("shell_id", mcp.Required(), mcp.Description("The watched process's shell ID")),
		mcp.WithNumber("since_event_id", mcp.Description("Only events after this ID; 0 or absent for all that are kept")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), s.watchProcessEvents)
}

type watchProcessArgs struct {
	inWorkspace
	Command       string   `json:"command" mcp:"required"`
	ErrorPatterns []string `json:"error_patterns"`
	IdleTimeout   float64  `json:"idle_timeout"`
	Description   string   `json:"description"`
	withSecrets
}

func (s *Server) watchProcess(ctx context.Context, sp *space, a watchProcessArgs) (string, error) {
	patterns, err := watch.Compile(a.ErrorPatterns)
	if err != nil {
		return "", err
	}
	ms := a.IdleTimeout
	if ms < 0 || ms > float64(maxIdleTimeout.Milliseconds()) {
		return "", fmt.Errorf("idle_timeout %v: want milliseconds from 0 to %d", ms, maxIdleTimeout.Milliseconds())
	}
	env, err := s.callSecrets(a.Secrets)
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp) // a command may change any file
	return sp.shells.Watch(shells.Watch{
		Command: shells.Command{
			Command:     a.Command,
			Description: a.Description,
			Owner:       sessionID(ctx),
			Env:         env,
		},
		Patterns: patterns,
		Idle:     time.Duration(ms * float64(time.Millisecond)),
	})
}

// eventsAnswer is watch_process_events's result.
type eventsAnswer struct {
	ShellID string `json:"shell_id"`
	Status  string `json:"status"`
	watch.Page
}

type watchEventsArgs struct {
	inWorkspace
	ShellID      string `json:"shell_id" mcp:"required"`
	SinceEventID int    `json:"since_event_id"`
}

func (s *Server) watchProcessEvents(ctx context.Context, a watchEventsArgs) (string, error) {
	id, since := a.ShellID, a.SinceEventID
	if since < 0 {
		return "", fmt.Errorf("since_event_id %d: want a whole number, at least 0", since)
	}
	owner := sessionID(ctx)
	sp, err := s.shellSpace(a.Workspace, owner, id)
	if err != nil {
		return "", err
	}
	page, status, err := sp.shells.Events(owner, id, int64(since))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // log lines are full of < and >
	if err := enc.Encode(eventsAnswer{ShellID: id, Status: status, Page: page}); err != nil {
		return "", fmt.Errorf("watch events: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
