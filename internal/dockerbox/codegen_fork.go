package dockerbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A fork is a new sandbox whose workspace starts as a copy of another's,
// independent afterwards: same entry, same image and settings, a
// workspace the provider made. The copy is made by a one-shot container
// of the sandbox's own image, as the sandbox's user, with no network,
// no capabilities and the source mounted read-only: the plugin never
// reads or writes the agent's files itself, so a symlink or a strange
// file in the workspace can reach nothing the sandbox could not. The
// source is frozen while it is copied, so the copy is of one moment.

// Fork makes count new sandboxes whose workspaces start as copies of
// the sandbox id's.
func (p *CodegenProvider) Fork(ctx context.Context, id string, count int) ([]plugin.Provisioned, error) {
	src, err := provision.ForkSource[*codegenBox](p.boxes, id, count, CodegenMode)
	if err != nil {
		return nil, err
	}
	if src.set.tmpfs > 0 {
		return nil, sandbox.Errorf(sandbox.KindStart, "fork %s: %v", id, errTmpfsFork)
	}
	if why := src.ctr.dead(); why != "" {
		return nil, sandbox.Errorf(sandbox.KindStart, "fork %s: the sandbox is dead: %s", id, why)
	}
	if !src.paused.Load() {
		// Frozen for the copy; a sandbox the user paused stays paused.
		if err := src.ctr.freeze(ctx); err != nil {
			return nil, fmt.Errorf("fork %s: for the copy: %w", id, err)
		}
		defer func() { _ = src.ctr.thaw(context.WithoutCancel(ctx)) }()
	}
	set := src.set
	set.workspace, set.seed = "", src.info.Workspace
	if src.vol != nil {
		// The copy mounts the volume read-only; the forks have
		// workspaces of their own, not the volume.
		set.seed, set.volume = src.vol.name, ""
	}
	out, err := p.boxes.AddForks(ctx, id, count, func() (provision.Box, error) {
		return p.start(ctx, src.info.Name, set)
	}, func(b provision.Box) { p.discard(b.(*codegenBox)) })
	if err != nil {
		return nil, err
	}
	p.log.Info("codegen sandbox forked", "id", id, "count", count)
	return out, nil
}

// copyWorkspace copies the tree src into the empty dst, both host
// directories, in a one-shot container of image run as uid:gid (see
// above).
func copyWorkspace(ctx context.Context, cli *client.Client, image string, uid, gid int, src, dst string) error {
	const from, to = "/fork/from", "/fork/to"
	pids := int64(64)
	name := containerName()
	lbl := labels("fork")
	lbl[LabelMode] = CodegenMode
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name,
		Config: &container.Config{
			Image: image, User: strconv.Itoa(uid) + ":" + strconv.Itoa(gid), Labels: lbl,
			Entrypoint: []string{"cp"}, Cmd: []string{"-RPp", from + "/.", to + "/"},
			NetworkDisabled: true,
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    networkNone,
			Binds:          []string{src + ":" + from + ":ro", dst + ":" + to + ":rw"},
			ReadonlyRootfs: true,
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			Resources:      container.Resources{PidsLimit: &pids},
		},
	})
	if err != nil {
		return fmt.Errorf("create the copying container: %w", err)
	}
	defer removeNamed(cli, created.ID)
	wait := cli.ContainerWait(ctx, created.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("start the copying container: %w", err)
	}
	var code int64
	select {
	case r := <-wait.Result:
		code = r.StatusCode
	case err := <-wait.Error:
		return fmt.Errorf("wait for the copying container: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	if code == 0 {
		return nil
	}
	return fmt.Errorf("copy the workspace: cp exited %d: %s", code, containerLogs(cli, created.ID))
}

// containerLogs is the end of what a stopped container printed, its
// stdout and stderr demultiplexed as the attach's are.
func containerLogs(cli *client.Client, id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "5"})
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	tail := &bounded.Tail{Max: outputTail}
	_, _ = stdcopy.StdCopy(tail, tail, rc)
	return strings.TrimSpace(string(tail.Bytes()))
}
