package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPidsLimitHolds: with --pids-limit the agent's commands can start
// no more than that many tasks of their user: a command starting 100
// sleeps under a limit of 64 is refused some (bash says so), and
// sandboxd goes on answering. The agent runs as a user of its own here
// (the kernel counts all of a user's tasks), as a Pod's would.
func TestPidsLimitHolds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's commands must run as a user of their own, which only root can give them")
	}
	dir := t.TempDir()
	// The agent's user owns the workspace and may reach it.
	if err := os.Chown(dir, 64999, 64999); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, "--workspace", dir, "--run-as", "64999:64999", "--log-level", "error", "--pids-limit", "64")
	cs := s.connect(t)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
		"command": `for i in $(seq 100); do sleep 30 & done 2>&1; echo started`, "timeout": 8000}})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(res)
	if !strings.Contains(text, "Resource temporarily unavailable") {
		t.Errorf("100 sleeps under a limit of 64: %.400q", text)
	}
	if out := callTool(t, cs, "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
		t.Fatalf("after the limit was hit: %q", out)
	}
}

// TestPidsLimitRefusesTooFew: a limit sandboxd's own threads would use
// up is refused at start.
func TestPidsLimitRefusesTooFew(t *testing.T) {
	err := run(t.Context(), []string{"--workspace", t.TempDir(), "--pids-limit", "8"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || err.Error() != "--pids-limit 8: want at least 64 (sandboxd's own threads count against it), or 0 for none" {
		t.Fatalf("--pids-limit 8: %v", err)
	}
}
