package dockerbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestCodegenLimitsHold: the agent's fork bomb is held by the sandbox's
// pids_limit and ends with its call, and a memory hog is killed by its
// memory limit, not sandboxd: after each the sandbox answers, with its
// processes back to what it had (issue 33's limits, on the real image).
func TestCodegenLimitsHold(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode,
		Config: map[string]any{"image": image, "cache": "none", "pids_limit": 64, "memory": "256m"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}) })
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	pids := func() int {
		t.Helper()
		list, err := p.List(ctx, plugin.ListOptions{Usage: true})
		if err != nil || len(list) != 1 {
			t.Fatalf("List: %v %+v", err, list)
		}
		n, err := strconv.Atoi(list[0].Details[provision.UsagePids])
		if err != nil {
			t.Fatalf("no pids usage: %v", list[0].Details)
		}
		return n
	}
	alive := func(after string) {
		t.Helper()
		if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
			t.Fatalf("after %s: %q", after, out)
		}
	}
	alive("start")
	before := pids()

	start := time.Now()
	text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": `bomb() { bomb | bomb & }; bomb; sleep 60`, "timeout": 5000})
	t.Logf("the fork bomb's call ended after %v: %.200q", time.Since(start).Round(time.Millisecond), text)
	if !strings.Contains(text, "Command timed out after 5s") {
		t.Errorf("the fork bomb's call: %q, want its timeout", text)
	}
	alive("the fork bomb")
	deadline := time.Now().Add(30 * time.Second)
	for n := pids(); n > before; n = pids() {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes in the sandbox 30s after the fork bomb's call, %d before it", n, before)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// GNU tail keeps a stream without newlines whole: 600 MB of it
	// against 256 MB. The kernel kills the biggest process of the
	// container's memory cgroup: tail, not sandboxd.
	text, _ = mcptest.Call(t, cs, "Bash", map[string]any{"command": `head -c 600000000 /dev/zero | tail >/dev/null`, "timeout": 60000})
	t.Logf("the memory hog's call: %.300q", text)
	if !strings.Contains(text, "Killed") || !strings.HasSuffix(strings.TrimSpace(text), "Exit code: 137") {
		t.Errorf("the memory hog's call: %q, want it killed (SIGKILL, 137)", text)
	}
	alive("the memory hog")
	if n := pids(); n > before {
		t.Errorf("%d processes after the memory hog, %d before it", n, before)
	}
}
