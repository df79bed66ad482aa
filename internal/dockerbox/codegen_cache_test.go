package dockerbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// cacheVolumesOf lists the cache volumes labelled for workspace.
func cacheVolumesOf(t testing.TB, workspace string) []string {
	t.Helper()
	out := docker(t, "volume", "ls", "-q", "--filter", "label="+LabelKind+"="+KindCache, "--filter", "label="+LabelWorkspace+"="+workspace)
	if out == "" {
		return nil
	}
	return strings.Fields(out)
}

// removeCacheVolumesUnder removes the cache volumes of workspaces under
// dir (a test's temporary root): a failing test, or one whose sandbox
// kept its workspace's volume, must not leak them.
func removeCacheVolumesUnder(t testing.TB, dir string) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	out := docker(t, "volume", "ls", "--filter", "label="+LabelKind+"="+KindCache, "--format", `{{.Name}} {{.Label "`+LabelWorkspace+`"}}`)
	for line := range strings.Lines(out) {
		name, ws, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name != "" && strings.HasPrefix(ws, dir+string(filepath.Separator)) {
			docker(t, "volume", "rm", "-f", name)
		}
	}
}

func TestCodegenCacheKeyChecked(t *testing.T) {
	p := NewCodegenProvider(DefaultHardening, nil)
	for _, v := range []string{"workspace", "sandbox", "none"} {
		if err := p.Check("code", map[string]any{"image": "x", "cache": v}); err != nil {
			t.Errorf("cache: %s refused: %v", v, err)
		}
	}
	err := p.Check("code", map[string]any{"image": "x", "cache": "volume"})
	want := `config: key "cache": want one of workspace, sandbox, none (where the Go build and module caches live), got "volume"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("cache: volume: %v; want %q", err, want)
	}
}

func TestCacheVolumeName(t *testing.T) {
	// sha256("/home/me/repo") begins 74b392f5c9822574 (sha256sum); the
	// name is stable for a workspace, and a sandbox's own adds its id.
	ws := cacheVolumeName("/home/me/repo", cacheWorkspace, "cg-1")
	if ws != "promptkit-codegen-cache-74b392f5c9822574" {
		t.Errorf("workspace volume name %q", ws)
	}
	if again := cacheVolumeName("/home/me/repo", cacheWorkspace, "cg-2"); again != ws {
		t.Errorf("the same workspace got %q and %q", ws, again)
	}
	if other := cacheVolumeName("/home/me/repo2", cacheWorkspace, "cg-1"); other == ws {
		t.Errorf("two workspaces share %q", ws)
	}
	if sb := cacheVolumeName("/home/me/repo", cacheSandbox, "cg-1"); sb != ws+"-cg-1" {
		t.Errorf("sandbox volume name %q, want %q", sb, ws+"-cg-1")
	}
}

// bash runs command through the sandbox's Bash tool.
func bash(t *testing.T, got plugin.Provisioned, command string) string {
	t.Helper()
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	return strings.TrimSpace(mcptest.CallText(t, cs, "Bash", map[string]any{"command": command}))
}

// TestCodegenCacheWorkspace: with the default cache: workspace, the
// agent (the workspace's owner, uid 1234, not the image's user) builds
// into GOCACHE on the workspace's volume; the volume outlives Release,
// the workspace's next sandbox finds what the first wrote, and a Release
// with Purge removes it.
func TestCodegenCacheWorkspace(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	for name, content := range map[string]string{
		"go.mod":  "module example.com/tiny\n\ngo 1.24\n",
		"tiny.go": "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
	} {
		path := filepath.Join(ws, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 1234, 1234); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{"image": image, "workspace": ws}
	first, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	vol := cacheVolumeName(ws, cacheWorkspace, "")
	if first.Details["cache"] != "workspace" || first.Details["cache_volume"] != vol {
		t.Errorf("details cache %q, cache_volume %q; want workspace, %s", first.Details["cache"], first.Details["cache_volume"], vol)
	}
	out := bash(t, first, `go env GOCACHE GOMODCACHE && id -u && stat -c '%a' /cache && go build ./... && echo built && echo kept > "$(go env GOCACHE)/probe" && stat -c '%u' "$(go env GOCACHE)/probe"`)
	if want := "/cache/go-build\n/cache/go-mod\n1234\n1777\nbuilt\n1234"; out != want {
		t.Errorf("first sandbox:\n%s\nwant\n%s", out, want)
	}
	if err := p.Release(ctx, first.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := cacheVolumesOf(t, ws); len(got) != 1 || got[0] != vol {
		t.Fatalf("volumes of the workspace after Release: %q; want [%s]", got, vol)
	}
	if lbl := docker(t, "volume", "inspect", "--format", `{{index .Labels "`+LabelCache+`"}} {{index .Labels "`+LabelMode+`"}}`, vol); lbl != "workspace docker_codegen" {
		t.Errorf("volume labels: %q", lbl)
	}

	second, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	// The build's own entries are there too: a second build of the same
	// package compiles nothing (go build -x runs no compile).
	out = bash(t, second, `cat /cache/go-build/probe && go build -x ./... 2>&1 | grep -c '/compile ' || true`)
	if want := "kept\n0"; out != want {
		t.Errorf("second sandbox: %q, want %q", out, want)
	}
	if err := p.Release(ctx, second.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if got := cacheVolumesOf(t, ws); len(got) != 0 {
		t.Errorf("volumes of the workspace after a purging Release: %q", got)
	}
}

// TestCodegenCacheSandboxAndNone: cache: sandbox gives the sandbox a
// volume of its own that Release removes; a workspace the provider
// makes gets the same; cache: none mounts none and keeps the caches on
// /tmp.
func TestCodegenCacheSandboxAndNone(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)

	for _, tc := range []struct {
		name string
		cfg  map[string]any
	}{
		{"cache: sandbox", map[string]any{"image": image, "workspace": ws, "cache": "sandbox"}},
		{"provider's workspace", map[string]any{"image": image}},
	} {
		got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: tc.cfg})
		if err != nil {
			t.Fatal(err)
		}
		vol := cacheVolumeName(got.Workspace, cacheSandbox, got.ID)
		if got.Details["cache"] != "sandbox" || got.Details["cache_volume"] != vol {
			t.Errorf("%s: details cache %q, cache_volume %q; want sandbox, %s", tc.name, got.Details["cache"], got.Details["cache_volume"], vol)
		}
		if out := bash(t, got, `echo x > /cache/w && go env GOCACHE`); out != "/cache/go-build" {
			t.Errorf("%s: %q", tc.name, out)
		}
		if have := cacheVolumesOf(t, got.Workspace); len(have) != 1 || have[0] != vol {
			t.Errorf("%s: volumes while it runs: %q, want [%s]", tc.name, have, vol)
		}
		if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
			t.Fatal(err)
		}
		if have := cacheVolumesOf(t, got.Workspace); len(have) != 0 {
			t.Errorf("%s: volumes after Release: %q", tc.name, have)
		}
	}

	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{"image": image, "workspace": ws, "cache": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Details["cache"] != "none" || got.Details["cache_volume"] != "" {
		t.Errorf("cache: none: details %v", got.Details)
	}
	if have := cacheVolumesOf(t, ws); len(have) != 0 {
		t.Errorf("cache: none made volumes %q", have)
	}
	if out := bash(t, got, `go env GOCACHE GOMODCACHE`); out != "/tmp/.cache/go-build\n/tmp/go/pkg/mod" {
		t.Errorf("cache: none: %q", out)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveStaleCacheVolumes: a per-sandbox cache volume whose plugin
// process is dead goes; one of a live process, of another host, or kept
// for a workspace (no PID) stays.
func TestRemoveStaleCacheVolumes(t *testing.T) {
	busyboxImage(t) // Docker is required
	self := os.Getpid()
	alive := func(pid int) bool { return pid != self && processExists(pid) }
	ws := filepath.Join(t.TempDir(), "ws")
	t.Cleanup(func() { removeCacheVolumesUnder(t, filepath.Dir(ws)) })
	create := func(suffix string, extra ...string) string {
		name := cacheVolumeName(ws, cacheWorkspace, "") + suffix
		args := []string{"volume", "create", "--label", LabelPlugin + "=" + PluginName, "--label", LabelKind + "=" + KindCache,
			"--label", LabelWorkspace + "=" + ws}
		for _, e := range extra {
			args = append(args, "--label", e)
		}
		return docker(t, append(args, name)...)
	}
	stale := create("-stale", LabelCache+"=sandbox", LabelHost+"="+hostname(), LabelPID+"="+itoa(self))
	live := create("-live", LabelCache+"=sandbox", LabelHost+"="+hostname(), LabelPID+"=1")
	other := create("-other", LabelCache+"=sandbox", LabelHost+"=some-other-host", LabelPID+"="+itoa(self))
	kept := create("", LabelCache+"=workspace", LabelHost+"="+hostname())

	cli, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	removed, err := removeStaleCacheVolumes(ctxTimeout(t, time.Minute), cli, alive)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %q, want [%s]", removed, stale)
	}
	left := cacheVolumesOf(t, ws)
	slices.Sort(left)
	if want := []string{kept, live, other}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
}
