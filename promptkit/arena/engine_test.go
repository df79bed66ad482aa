package arena_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/AltairaLabs/promptarena/arena/arenaconfig"
	"github.com/AltairaLabs/promptarena/arena/engine"
	"github.com/AltairaLabs/promptarena/arena/mcpsource"
	"github.com/AltairaLabs/promptarena/arena/statestore"
)

// runArena runs every scenario of the arena config at path with arena's
// engine, as promptarena run does, concurrency sessions at a time, and
// returns each session's result by scenario.
func runArena(t *testing.T, path string, concurrency int, timeout time.Duration) map[string]*statestore.RunResult {
	t.Helper()
	cfg, err := arenaconfig.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.NewEngineFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := eng.Close(); err != nil {
			t.Errorf("closing the engine: %v", err)
		}
	}()
	plan, err := eng.GenerateRunPlan(nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ids, err := eng.ExecuteRuns(ctx, plan, concurrency)
	if err != nil {
		t.Fatal(err)
	}
	store, ok := eng.GetStateStore().(*statestore.ArenaStateStore)
	if !ok {
		t.Fatalf("the engine's state store is a %T", eng.GetStateStore())
	}
	out := map[string]*statestore.RunResult{}
	for _, id := range ids {
		r, err := store.GetResult(ctx, id)
		if err != nil {
			t.Fatalf("result of run %s: %v", id, err)
		}
		out[r.ScenarioID] = r
	}
	return out
}

var registered atomic.Int64

// registerSource registers src under a name of its own (the registry
// panics on a second registration of a name, and lives as long as the
// test binary) and returns the name.
func registerSource(src mcpsource.MCPSource) string {
	name := fmt.Sprintf("test-source-%d", registered.Add(1))
	mcpsource.RegisterMCPSource(name, src)
	return name
}
