package arena_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit/arena"
)

// TestArenaOpensTheSourcePerSession runs arena's engine on a kit whose
// MCP server comes from the source, session-scoped, with a provisioning
// that records what it is asked for and fails: each of four sessions
// asks once, with its scenario's workspace expanded into source_args and
// the config made absolute; a scenario without the variable fails
// before anything is provisioned, saying which argument; and each
// failure is the session's error in arena's results.
func TestArenaOpensTheSourcePerSession(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var asked []arena.Args
	src := arena.NewWithProvision(func(_ context.Context, a arena.Args) (mcpsource.MCPConn, func() error, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, a)
		return mcpsource.MCPConn{}, nil, errors.New("provisioned nothing")
	})
	name := registerSource(src)
	k := kit{source: name, sourceArgs: map[string]any{"config": "runtime.yaml", "sandbox": "code", "workspace": "{{scenario.workspace}}"}}
	var workspaces []string
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		ws := filepath.Join(dir, "ws", s)
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		workspaces = append(workspaces, ws)
		k.scenarios = append(k.scenarios, session{name: s, variables: map[string]string{"workspace": ws}})
	}
	k.scenarios = append(k.scenarios, session{name: "novar"})
	results := runArena(t, k.write(t, dir), 4, time.Minute)

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range asked {
		if a.Config != filepath.Join(wd, "runtime.yaml") || a.Sandbox != "code" {
			t.Errorf("asked for %+v", a)
		}
		got = append(got, a.Workspace)
	}
	slices.Sort(got)
	if !slices.Equal(got, workspaces) {
		t.Errorf("workspaces asked for: %v, want each of %v once", got, workspaces)
	}
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		want := `mcp server "sandbox": source "` + name + `" Open failed: provisioned nothing`
		if r := results[s]; r == nil || !strings.Contains(r.Error, want) {
			t.Errorf("session %s: result %+v; want its error to say %q", s, r, want)
		}
	}
	want := `Open failed: source_args.workspace: "{{scenario.workspace}}" names a template variable the scenario does not define (spec.variables)`
	if r := results["novar"]; r == nil || !strings.Contains(r.Error, want) {
		t.Errorf("session without the variable: result %+v; want its error to say %q", r, want)
	}
}
