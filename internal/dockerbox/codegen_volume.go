package dockerbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A workspace volume (`codegen up --workspace-volume NAME`) is a named
// engine volume mounted at the workspace instead of a host directory:
// created on first use, labelled as ours, owned by the sandbox's user,
// kept when its sandbox is released (only a Release with Purge removes
// it), and attached to one sandbox at a time. The provider never mounts
// a volume it did not create: one of that name without its labels is
// refused.

// KindWorkspace is LabelKind of a workspace volume; LabelUser holds the
// UID:GID its files belong to.
const (
	KindWorkspace = "workspace"
	LabelUser     = "org.promptkit.sandbox.user"
)

// Errors of a workspace volume that cannot be attached; both are
// sandbox.KindStart.
var (
	// ErrVolumeNotOurs: a volume of that name exists and was not made by
	// this provider.
	ErrVolumeNotOurs = errors.New("the volume exists and was not made by promptkit-sandbox")
	// ErrVolumeInUse: the volume is attached to another sandbox.
	ErrVolumeInUse = errors.New("the volume is attached to another sandbox")
)

// volumeNamePattern is the engine's rule for a volume name.
var volumeNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// checkVolumeName refuses a name the engine would refuse, or take for a
// host path.
func checkVolumeName(name string) error {
	if len(name) > 255 || !volumeNamePattern.MatchString(name) {
		return fmt.Errorf("%s: workspace volume %q: a volume name is 2 to 255 characters of [a-zA-Z0-9_.-], starting with a letter or digit", CodegenMode, name)
	}
	return nil
}

// workspaceVolume is a sandbox's attached workspace volume.
type workspaceVolume struct {
	cli  *client.Client
	name string
	// created: this provision made it (and a failed one removes it:
	// an empty volume would be the only thing left of it).
	created bool
	// detach gives up the provider's claim on it.
	detach func()
}

// attachVolume reserves the volume name for sandbox id in this process,
// then finds it or creates it owned by uid:gid (image is the image of
// the sandbox, used for the container that sets the owner). It refuses
// a volume without our labels, one owned by another user, and one
// another sandbox (of any process) has mounted.
func (p *CodegenProvider) attachVolume(ctx context.Context, cli *client.Client, name, id, image string, uid, gid int) (_ *workspaceVolume, err error) {
	p.mu.Lock()
	if other, ok := p.attached[name]; ok {
		p.mu.Unlock()
		return nil, sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w (%s); release it first (codegen down %s)", CodegenMode, name, ErrVolumeInUse, other, other)
	}
	if p.attached == nil {
		p.attached = map[string]string{}
	}
	p.attached[name] = id
	p.mu.Unlock()
	v := &workspaceVolume{cli: cli, name: name, detach: func() {
		p.mu.Lock()
		if p.attached[name] == id {
			delete(p.attached, name)
		}
		p.mu.Unlock()
	}}
	defer func() {
		if err != nil {
			v.detach()
		}
	}()
	user := strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
	got, err := cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
	switch {
	case err == nil:
		if err := checkOurs(name, got.Volume.Labels, user); err != nil {
			return nil, err
		}
		if users, err := volumeUsers(ctx, cli, name); err != nil {
			return nil, provisionErr(ctx, cli, "workspace volume "+name, err)
		} else if len(users) > 0 {
			return nil, sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w (%s)", CodegenMode, name, ErrVolumeInUse, strings.Join(users, ", "))
		}
		return v, nil
	case !cerrdefs.IsNotFound(err):
		return nil, provisionErr(ctx, cli, "inspect workspace volume "+name, err)
	}
	lbl := map[string]string{
		LabelPlugin: PluginName, LabelHost: hostname(), LabelMode: CodegenMode,
		LabelKind: KindWorkspace, LabelUser: user,
	}
	created, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: lbl})
	if err != nil {
		return nil, provisionErr(ctx, cli, "create workspace volume "+name, err)
	}
	// The engine answers a create of a name made in between with that
	// volume, whoever made it.
	if err := checkOurs(name, created.Volume.Labels, user); err != nil {
		return nil, err
	}
	if err := chownVolume(ctx, cli, image, name, uid, gid); err != nil {
		_ = removeVolume(ctx, cli, name, inUseGrace)
		return nil, sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: give it to %s: %w", CodegenMode, name, user, err)
	}
	v.created = true
	return v, nil
}

// checkOurs refuses a volume not labelled as a workspace volume of this
// plugin, or whose files belong to another user than the sandbox's.
func checkOurs(name string, lbl map[string]string, user string) error {
	if lbl[LabelPlugin] != PluginName || lbl[LabelKind] != KindWorkspace {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w (it lacks the labels %s=%s and %s=%s); "+
			"pick another name: the provider only attaches workspace volumes it created", CodegenMode, name, ErrVolumeNotOurs, LabelPlugin, PluginName, LabelKind, KindWorkspace)
	}
	if got := lbl[LabelUser]; got != user {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: its files belong to %s and the sandbox runs as %s, which could not write them; set user: %s", CodegenMode, name, got, user, got)
	}
	return nil
}

// volumeUsers names the containers, running or not, that mount the
// volume name: a codegen sandbox by its id.
func volumeUsers(ctx context.Context, cli *client.Client, name string) ([]string, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("volume", name)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list.Items {
		if id := c.Labels[LabelID]; id != "" {
			out = append(out, "sandbox "+id)
		} else {
			out = append(out, "container "+c.ID[:min(12, len(c.ID))])
		}
	}
	return out, nil
}

// chownVolume gives the root of the new volume name to uid:gid: the
// engine makes it root's, and the sandbox has no capability to write
// there. A container of image is created (never started) with the
// volume mounted, and the engine extracts into it an archive whose one
// directory entry is the volume's root, owned by uid:gid: no process
// runs, and no program of the image is needed.
func chownVolume(ctx context.Context, cli *client.Client, image, name string, uid, gid int) error {
	const parent, dir = "/promptkit-volume", "root"
	lbl := labels("volume")
	lbl[LabelMode] = CodegenMode
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: containerName(),
		Config: &container.Config{Image: image, Labels: lbl, NetworkDisabled: true, Entrypoint: []string{"/nonexistent"}},
		HostConfig: &container.HostConfig{
			NetworkMode: networkNone,
			Binds:       []string{name + ":" + parent + "/" + dir + ":rw"},
		},
	})
	if err != nil {
		return fmt.Errorf("create the container that sets its owner: %w", err)
	}
	defer removeNamed(cli, created.ID)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: time.Now()}); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if _, err := cli.CopyToContainer(ctx, created.ID, client.CopyToContainerOptions{DestinationPath: parent, Content: &buf}); err != nil {
		return fmt.Errorf("set its owner: %w", err)
	}
	return nil
}

// remove deletes the volume; its sandbox's container must be gone.
func (v *workspaceVolume) remove(ctx context.Context) error {
	if err := removeVolume(ctx, v.cli, v.name, inUseGrace); err != nil {
		return fmt.Errorf("%s: remove workspace volume %s: %w", CodegenMode, v.name, err)
	}
	return nil
}

// Volumes makes the provider a plugin.VolumeKeeper: every workspace
// volume on the engine that a docker_codegen provider made, and the
// sandbox each is attached to (by the label of the container mounting
// it, whichever process holds it).
func (p *CodegenProvider) Volumes(ctx context.Context) ([]plugin.WorkspaceVolume, error) {
	cli, err := p.client()
	if err != nil {
		return nil, err
	}
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{
		Filters: make(client.Filters).Add("label", LabelPlugin+"="+PluginName).Add("label", LabelKind+"="+KindWorkspace),
	})
	if err != nil {
		if isConnErr(err) {
			return nil, unreachable(cli, err)
		}
		return nil, fmt.Errorf("%s: list workspace volumes: %w", CodegenMode, err)
	}
	if len(vols.Items) == 0 {
		return nil, nil
	}
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelMode+"="+CodegenMode)})
	if err != nil {
		return nil, fmt.Errorf("%s: list the containers of workspace volumes: %w", CodegenMode, err)
	}
	attached := map[string]string{}
	for _, c := range ctrs.Items {
		for _, m := range c.Mounts {
			if m.Name != "" && c.Labels[LabelID] != "" {
				attached[m.Name] = c.Labels[LabelID]
			}
		}
	}
	out := make([]plugin.WorkspaceVolume, 0, len(vols.Items))
	for _, v := range vols.Items {
		w := plugin.WorkspaceVolume{Name: v.Name, Mode: CodegenMode, Sandbox: attached[v.Name],
			Details: map[string]string{"user": v.Labels[LabelUser], "driver": v.Driver}}
		if t, err := time.Parse(time.RFC3339, v.CreatedAt); err == nil {
			w.Created = t
		}
		out = append(out, w)
	}
	return out, nil
}

var _ plugin.VolumeKeeper = (*CodegenProvider)(nil)
