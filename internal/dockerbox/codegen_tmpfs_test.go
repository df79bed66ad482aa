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

// TestCodegenWorkspaceTmpfsValidates: the key's size is checked as the
// entry is read, against the entry's workspace and memory.
func TestCodegenWorkspaceTmpfsValidates(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"workspace_tmpfs": "lots"}, `config: key "workspace_tmpfs": `},
		{map[string]any{"workspace_tmpfs": "512k"}, `config: key "workspace_tmpfs": size "512k" out of range (at least 1m)`},
		{map[string]any{"workspace_tmpfs": "64m", "workspace": "/srv/repo"}, `config: key "workspace_tmpfs": excludes the key "workspace"`},
		{map[string]any{"workspace_tmpfs": "1g", "memory": "512m"}, `config: key "workspace_tmpfs": 1g is no less than memory (536870912 bytes), which the tmpfs's pages count against`},
	} {
		_, err := parseCodegenConfig(tc.cfg, DefaultHardening)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s...", tc.cfg, err, tc.want)
		}
	}
	s, err := parseCodegenConfig(map[string]any{"workspace_tmpfs": "64m", "memory": "1g"}, DefaultHardening)
	if err != nil || s.tmpfs != 64<<20 {
		t.Fatalf("64m: %d, %v", s.tmpfs, err)
	}
	p, _ := newTestProvider(t)
	for _, spec := range []plugin.ProvisionSpec{
		{Workspace: t.TempDir(), Config: map[string]any{"workspace_tmpfs": "64m"}},
		{WorkspaceVolume: "vol", Config: map[string]any{"workspace_tmpfs": "64m"}},
	} {
		if _, err := p.settings(spec); err == nil || !strings.Contains(err.Error(), "the entry's workspace is a tmpfs (workspace_tmpfs); it cannot be a host directory or a workspace volume") {
			t.Errorf("%+v: %v", spec, err)
		}
	}
}

// TestCodegenWorkspaceTmpfsHolds: a sandbox whose workspace is a tmpfs
// of 8 MiB holds the agent's writes there: a command that writes past it
// fails with "No space left on device", as does a Write, saying so; the
// sandbox goes on (sandboxd answers, and once the file is gone a write
// fits again). Its usage reports the limit, and it cannot be forked.
func TestCodegenWorkspaceTmpfsHolds(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode,
		Config: map[string]any{"image": image, "cache": "none", "workspace_tmpfs": "8m", "memory": "512m"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}) })
	if got.Details["workspace_by"] != "tmpfs" || got.Details["workspace_tmpfs"] != strconv.Itoa(8<<20) || got.Workspace != "" {
		t.Errorf("provisioned %+v", got)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	bash := func(cmd string) string {
		text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": cmd})
		return text
	}
	if out := bash(`stat -c '%U %a' . && head -c 20000000 /dev/zero > big; echo "status $?"; ls -s --block-size=1 big`); !strings.Contains(out, "No space left on device") || !strings.Contains(out, "status 1") {
		t.Errorf("a command writing 20 MB into 8 MiB: %q", out)
	}
	text, isErr := mcptest.Call(t, cs, "Write", map[string]any{"file_path": "more.txt", "content": strings.Repeat("x", 1<<20)})
	if !isErr || !strings.Contains(text, "no space left on device") {
		t.Errorf("a Write into the full workspace: error %v, %q", isErr, text)
	}
	list, err := p.List(ctx, plugin.ListOptions{Usage: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %v %+v", err, list)
	}
	if d := list[0].Details; d[provision.UsageWorkspaceMax] != strconv.Itoa(8<<20) || d[provision.UsageWorkspace] == "" {
		t.Errorf("usage: workspace %q of %q, want some of 8 MiB", d[provision.UsageWorkspace], d[provision.UsageWorkspaceMax])
	}
	if out := bash(`rm big && echo fits > small && cat small`); strings.TrimSpace(out) != "fits" {
		t.Errorf("after freeing the space: %q", out)
	}
	if _, err := p.Fork(ctx, got.ID, 1); err == nil || !strings.Contains(err.Error(), "its workspace is a tmpfs (workspace_tmpfs), which the engine cannot copy") {
		t.Errorf("Fork: %v", err)
	}
}
