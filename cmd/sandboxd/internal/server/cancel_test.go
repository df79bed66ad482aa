package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// budgets are the call budgets the cancellation tests run under: none,
// and one longer than the test, under which a command runs on a context
// of its own until it is handed over.
var budgets = []time.Duration{0, time.Minute}

// cancelWays are the ways a client ends a call: with notifications/
// cancelled (the official SDK sends one when the call's context ends;
// the raw one is mcp-go's transport, the HTTP request left open), by
// dropping the HTTP request that carries it (mcp-go's Streamable HTTP
// client on a cancelled context), or by ending the session (mcp-go's
// Close: SSE closes its stream, Streamable HTTP sends a DELETE).
var cancelWays = []string{"sdk", "notification", "request", "session"}

// TestCancelKillsTheCommand: however the client gives up on a Bash call,
// over either transport, with or without a budget, the command's whole
// process group is killed, as a timeout would kill it.
func TestCancelKillsTheCommand(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{streamable, sse} {
		for _, way := range cancelWays {
			if way == "request" && tr == sse {
				continue // the POST of a call over SSE returns at once
			}
			for _, budget := range budgets {
				t.Run(fmt.Sprintf("%s/%s/budget=%s", tr, way, budget), func(t *testing.T) {
					t.Parallel()
					d := startDaemon(t, Config{CallBudget: budget})
					cancelled := d.cancelCall(t, tr, way, "Bash", map[string]any{"command": sleeper})
					ids := proctest.Identify(t, proctest.ReadPIDs(t, filepath.Join(d.dir, "pids"), 2)...)
					began := time.Now()
					cancelled()
					proctest.AssertGone(t, ids...)
					t.Logf("gone %s after the cancel", time.Since(began).Round(time.Millisecond))
				})
			}
		}
	}
}

// cancelCall starts tool over tr and returns the function that gives up
// on it the way named.
func (d *daemon) cancelCall(t *testing.T, tr transport, way, tool string, args map[string]any) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	switch way {
	case "sdk":
		cs := d.connect(t, tr)
		go cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		return cancel
	case "notification":
		c := connectMCPGo(t, d.url(tr), tr)
		go callRaw(ctx, c, 1000, tool, args)
		return func() { cancelRaw(t, c, 1000) }
	case "request":
		c := connectMCPGo(t, d.url(tr), tr)
		go callMCPGo(ctx, c, tool, args)
		return cancel
	case "session":
		c := connectMCPGo(t, d.url(tr), tr)
		go callMCPGo(ctx, c, tool, args)
		return func() { c.Close() }
	}
	t.Fatalf("no way %q", way)
	return nil
}

// url is where a client of tr connects.
func (d *daemon) url(tr transport) string {
	if tr == sse {
		return d.base + PathSSE
	}
	return d.base + PathMCP
}

// TestCancelKillsTheRun: a run_tests call the client cancels stops the
// test binary it started, over either transport, with or without a
// budget.
func TestCancelKillsTheRun(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{streamable, sse} {
		for _, budget := range budgets {
			t.Run(fmt.Sprintf("%s/budget=%s", tr, budget), func(t *testing.T) {
				t.Parallel()
				cfg := goProject(t, sleepyProject)
				cfg.CallBudget = budget
				d := startDaemon(t, cfg)
				cancelled := d.cancelCall(t, tr, "notification", "run_tests", nil)
				ids := proctest.Identify(t, proctest.ReadPIDsWithin(t, filepath.Join(d.dir, "pids"), 1, time.Minute)...)
				cancelled()
				proctest.AssertGone(t, ids...)
			})
		}
	}
}

// TestSessionEndCancelsOnlyItsCalls: a session's end cancels its own
// calls; another session's call runs to its end.
func TestSessionEndCancelsOnlyItsCalls(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	stay := d.connect(t, sse)
	// Released first thing on the way out, should the test fail early.
	t.Cleanup(func() { os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o644) })
	done := make(chan result, 1)
	go func() {
		r, _ := tryCall(stay, "Bash", map[string]any{"command": "echo $$ > stay.pid; while [ ! -e go ]; do sleep 0.01; done; echo stayed"})
		done <- r
	}()
	proctest.WaitFile(t, filepath.Join(d.dir, "stay.pid"))
	cancelled := d.cancelCall(t, sse, "session", "Bash", map[string]any{"command": sleeper})
	ids := proctest.Identify(t, proctest.ReadPIDs(t, filepath.Join(d.dir, "pids"), 2)...)
	cancelled()
	proctest.AssertGone(t, ids...)
	os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o644)
	if r := <-done; r.IsError || strings.TrimSpace(r.Text) != "stayed" {
		t.Errorf("the other session's call: %+v", r)
	}
}
