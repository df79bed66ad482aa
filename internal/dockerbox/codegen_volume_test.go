package dockerbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// testVolume is a workspace volume name no other test uses, removed
// when the test ends (with the cache volume kept for it) whatever
// happened.
func testVolume(t *testing.T) string {
	t.Helper()
	name := strings.Replace(uniqueName(t), "t-", "pks-ws-", 1)
	dockertest.CleanupWithEngine(t, func() {
		for _, v := range append([]string{name}, cacheVolumesOf(t, "volume:"+name)...) {
			docker(t, "volume", "rm", "-f", v)
		}
	})
	return name
}

// volumeExists says whether the engine has the volume name.
func volumeExists(t *testing.T, name string) bool {
	t.Helper()
	return docker(t, "volume", "ls", "-q", "--filter", "name=^"+name+"$") == name
}

// attachedTo is the sandbox Volumes says name is attached to; found is
// false when it does not list name.
func attachedTo(t *testing.T, p *CodegenProvider, name string) (id string, found bool) {
	t.Helper()
	vols, err := p.Volumes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vols {
		if v.Name == name {
			if v.Mode != CodegenMode || v.Details["user"] != codegenimage.User || v.Created.IsZero() {
				t.Errorf("volume listed as %+v", v)
			}
			return v.Sandbox, true
		}
	}
	return "", false
}

// TestCodegenWorkspaceVolume is a workspace volume's life on the real
// engine: created on first use, owned by the image's user so the agent
// can write, listed with the sandbox using it, refused to a second
// sandbox (of this process or another) while attached, kept by a
// Release so the next sandbox naming it finds the agent's files, and
// removed, with its build cache volume, by a Release with Purge.
func TestCodegenWorkspaceVolume(t *testing.T) {
	image := codegenImage(t)
	vol := testVolume(t) // removed after the providers have closed
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	ctx := context.Background()
	spec := plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}, WorkspaceVolume: vol}

	first, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if first.WorkspaceVolume != vol || first.Workspace != "" || first.Details["workspace_by"] != "volume" || first.Details["workspace_volume"] != vol {
		t.Errorf("provisioned %+v", first)
	}
	if owner := docker(t, "exec", first.Details["container"], "/bin/stat", "-c", "%u:%g", "/workspace"); owner != codegenimage.User {
		t.Errorf("the volume's root is owned by %s, want the image's user %s", owner, codegenimage.User)
	}
	if src := docker(t, "inspect", "--format", `{{range .Mounts}}{{if eq .Destination "/workspace"}}{{.Type}} {{.Name}}{{end}}{{end}}`, first.Details["container"]); src != "volume "+vol {
		t.Errorf("/workspace is mounted from %q, want the volume %s", src, vol)
	}
	cs := mcptest.Connect(t, first.Endpoint, first.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "notes/kept.txt", "content": "written before down\n"})
	if id, found := attachedTo(t, p, vol); !found || id != first.ID {
		t.Errorf("Volumes: %s attached to %q (listed %v), want %s", vol, id, found, first.ID)
	}
	cache := cacheVolumesOf(t, "volume:"+vol)
	if len(cache) != 1 {
		t.Errorf("cache volumes of the workspace volume: %v, want one", cache)
	}

	// A fork starts as a copy of the volume, in a workspace of its own.
	forks, err := p.Fork(ctx, first.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f := forks[0]; f.WorkspaceVolume != "" || f.Workspace == "" || f.Details["workspace_by"] != "provider" {
		t.Errorf("fork of a volume's sandbox: %+v", f)
	}
	fcs := mcptest.Connect(t, forks[0].Endpoint, forks[0].Token)
	if out := mcptest.CallText(t, fcs, "Read", map[string]any{"file_path": "notes/kept.txt"}); !strings.Contains(out, "written before down") {
		t.Errorf("the fork reads %q", out)
	}
	if err := p.Release(ctx, forks[0].ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if !volumeExists(t, vol) {
		t.Fatal("the fork's Release took the volume")
	}

	// Attached: refused to another sandbox of this process, and of
	// another (whose only witness is the engine).
	other, _ := newTestProvider(t)
	for label, pr := range map[string]*CodegenProvider{"this process": p, "another process": other} {
		_, err := pr.Provision(ctx, spec)
		if !errors.Is(err, ErrVolumeInUse) || sandbox.KindOf(err) != sandbox.KindStart || !strings.Contains(err.Error(), first.ID) {
			t.Errorf("%s: a second sandbox on the attached volume: %v (kind %v), want ErrVolumeInUse naming %s", label, err, sandbox.KindOf(err), first.ID)
		}
	}
	// The engine is asked what a sandbox uses only when List asks.
	if l, _ := p.List(ctx, plugin.ListOptions{}); len(l) != 1 || l[0].Details[provision.UsageMemory] != "" {
		t.Errorf("sandboxes after the refusals, without usage: %+v", l)
	}
	if l, _ := p.List(ctx, plugin.ListOptions{Usage: true}); len(l) != 1 || l[0].Details[provision.UsageMemory] == "" || l[0].WorkspaceVolume != vol {
		t.Errorf("sandboxes with usage: %+v", l)
	}

	// Released without Purge: the volume and its cache stay, detached.
	if err := p.Release(ctx, first.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if !volumeExists(t, vol) {
		t.Fatal("Release removed the workspace volume")
	}
	if id, found := attachedTo(t, p, vol); !found || id != "" {
		t.Errorf("Volumes after Release: attached to %q (listed %v), want listed and detached", id, found)
	}

	// Reattached, by another provider (a new plugin process): the
	// agent's files are there.
	second, err := other.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	cs = mcptest.Connect(t, second.Endpoint, second.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "notes/kept.txt"}); !strings.Contains(out, "written before down") {
		t.Errorf("the reattached volume reads %q", out)
	}
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "second.txt", "content": "x\n"})
	if got := cacheVolumesOf(t, "volume:"+vol); len(got) != 1 || len(cache) != 1 || got[0] != cache[0] {
		t.Errorf("cache volume on reattach: %v, want the first sandbox's %v", got, cache)
	}

	// Purged: the volume and its cache are gone, and nothing is left.
	if err := other.Release(ctx, second.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if volumeExists(t, vol) {
		t.Error("Release with Purge left the workspace volume")
	}
	if got := cacheVolumesOf(t, "volume:"+vol); len(got) != 0 {
		t.Errorf("Release with Purge left the cache volume %v", got)
	}
	if _, found := attachedTo(t, p, vol); found {
		t.Error("Volumes lists the purged volume")
	}
	if left := containersNamed(t, name); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
	// The purge gave the name back: the same process makes it anew.
	third, err := other.Provision(ctx, spec)
	if err != nil {
		t.Fatalf("a new volume of the purged one's name: %v", err)
	}
	if err := other.Release(ctx, third.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
}

// TestCodegenWorkspaceVolumeFailedStart: a provision that fails after
// creating its volume removes it (nothing of it is left); one that
// fails on an existing volume leaves that volume and its files alone.
func TestCodegenWorkspaceVolumeFailedStart(t *testing.T) {
	image := codegenImage(t)
	vol := testVolume(t)
	p, root := newTestProvider(t)
	name := uniqueName(t)
	ctx := context.Background()
	spec := plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "cache": "none"}, WorkspaceVolume: vol}

	dead, _ := newTestProvider(t)
	dead.hard.Entrypoint = []string{"/bin/sh", "-c", "echo sandboxd cannot start here >&2; exit 7"}
	if _, err := dead.Provision(ctx, spec); !errors.Is(err, sandbox.ErrStart) {
		t.Fatalf("a sandbox that dies at start: %v", err)
	}
	if volumeExists(t, vol) {
		t.Error("a failed first provision left the volume it created")
	}

	got, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "keep.txt", "content": "k\n"})
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Provision(ctx, spec); !errors.Is(err, sandbox.ErrStart) {
		t.Fatalf("a sandbox that dies at start: %v", err)
	}
	got, err = p.Provision(ctx, spec)
	if err != nil {
		t.Fatalf("the volume after a failed reattach: %v", err)
	}
	cs = mcptest.Connect(t, got.Endpoint, got.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "keep.txt"}); !strings.Contains(out, "k") {
		t.Errorf("after a failed reattach the volume reads %q", out)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if volumeExists(t, vol) {
		t.Error("Release with Purge left the volume")
	}
	assertNoContainers(t, name)
	assertNoDirs(t, root)
}

// TestCodegenWorkspaceVolumeRefused: a volume the provider did not
// create is never mounted, nor changed; a name the engine would refuse
// (or take for a host path) and a workspace given with a volume are
// refused before anything starts.
func TestCodegenWorkspaceVolumeRefused(t *testing.T) {
	image := codegenImage(t)
	foreign := testVolume(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	ctx := context.Background()
	docker(t, "volume", "create", "--label", "owner=someone-else", foreign)

	_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}, WorkspaceVolume: foreign})
	if !errors.Is(err, ErrVolumeNotOurs) || sandbox.KindOf(err) != sandbox.KindStart || !strings.Contains(err.Error(), "pick another name") {
		t.Errorf("an unlabelled volume: %v (kind %v), want ErrVolumeNotOurs", err, sandbox.KindOf(err))
	}
	if lbl := docker(t, "volume", "inspect", "--format", "{{json .Labels}}", foreign); lbl != `{"owner":"someone-else"}` {
		t.Errorf("the foreign volume was changed: labels %s", lbl)
	}
	if _, found := attachedTo(t, p, foreign); found {
		t.Error("Volumes lists a volume the provider did not make")
	}

	for _, bad := range []string{"x", "/etc", "../up", "-dash", "a b", strings.Repeat("v", 256)} {
		_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}, WorkspaceVolume: bad})
		if err == nil || !strings.Contains(err.Error(), "a volume name is 2 to 255 characters") {
			t.Errorf("volume name %q: %v", bad, err)
		}
	}
	_, err = p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}, Workspace: t.TempDir(), WorkspaceVolume: "pks-ws-x"})
	if err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("a workspace and a volume: %v", err)
	}
	if volumeExists(t, "pks-ws-x") {
		t.Error("a refused provision created its volume")
	}
	if left := containersNamed(t, name); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
}
