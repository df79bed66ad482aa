package kubecodegen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestForkOnTheRealCluster: two forks of a sandbox on a workspace volume
// start with copies of its workspace (files, a directory, a symlink kept
// a symlink) on emptyDirs of their own, and then diverge: what each
// writes is its own; the source keeps its volume and runs on. An unknown
// id, a bad count and a paused source are refused; nothing but the
// volume is left after the releases.
func TestForkOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	src, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg, WorkspaceVolume: "forked"})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, src.Endpoint, src.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "a.txt", "content": "from the source\n"})
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "sub/b.txt", "content": "nested\n"})
	mcptest.CallText(t, cs, "Bash", map[string]any{"command": "ln -s /etc/passwd link"})

	start := time.Now()
	forks, err := p.Fork(ctx, src.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("two forks took %v", time.Since(start).Round(time.Millisecond))
	if len(forks) != 2 {
		t.Fatalf("forks: %+v", forks)
	}
	for i, f := range forks {
		if f.Details["forked_from"] != src.ID || f.Details["start"] != "fork" || f.WorkspaceVolume != "" || f.Workspace != "emptyDir" {
			t.Errorf("fork %d: %+v", i, f)
		}
		fc := mcptest.Connect(t, f.Endpoint, f.Token)
		out := mcptest.CallText(t, fc, "Bash", map[string]any{"command": "cat a.txt sub/b.txt; readlink link; stat -c %U link"})
		if strings.TrimSpace(out) != "from the source\nnested\n/etc/passwd\nsandboxd" {
			t.Errorf("fork %d's copy: %q", i, out)
		}
		mcptest.CallText(t, fc, "Bash", map[string]any{"command": "echo 'fork " + string(rune('0'+i)) + "' > a.txt"})
	}
	for i, f := range forks {
		fc := mcptest.Connect(t, f.Endpoint, f.Token)
		if out := mcptest.CallText(t, fc, "Bash", map[string]any{"command": "cat a.txt"}); strings.TrimSpace(out) != "fork "+string(rune('0'+i)) {
			t.Errorf("fork %d after the writes: %q", i, out)
		}
	}
	if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "cat a.txt"}); strings.TrimSpace(out) != "from the source" {
		t.Errorf("the source after the forks wrote: %q", out)
	}

	if _, err := p.Fork(ctx, "cg-nosuch", 1); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Errorf("fork of an unknown id: %v", err)
	}
	if _, err := p.Fork(ctx, src.ID, provision.MaxForks+1); err == nil {
		t.Error("a fork of too many was made")
	}
	if err := p.Pause(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Fork(ctx, src.ID, 1); err == nil || !strings.Contains(err.Error(), "resume it first") {
		t.Errorf("fork of a paused sandbox: %v", err)
	}
	for _, id := range []string{src.ID, forks[0].ID, forks[1].ID} {
		if err := p.Release(ctx, id, plugin.ReleaseOptions{}); err != nil {
			t.Error(err)
		}
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) > 0 {
		t.Errorf("left after the releases: %v", left)
	}
	if s.claimOf(t, "forked") == nil {
		t.Error("the source's volume went with the releases")
	}
}
