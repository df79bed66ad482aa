package dockerbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// RemoveStale removes the containers a plugin process on this machine
// created and left behind when it died (SIGKILL, a crash): those labelled
// LabelPlugin=docker, with LabelHost naming this machine and LabelPID a
// process that no longer exists. It returns the IDs it removed.
// Containers of live plugin processes, and of other machines sharing the
// engine, are left alone.
func RemoveStale(ctx context.Context) ([]string, error) {
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return removeStale(ctx, cli, processExists)
}

func removeStale(ctx context.Context, cli *client.Client, alive func(pid int) bool) ([]string, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelPlugin+"="+PluginName).Add("label", LabelHost+"="+hostname()),
	})
	if err != nil {
		if isConnErr(err) {
			return nil, unreachable(cli, err)
		}
		return nil, fmt.Errorf("list containers: %w", err)
	}
	var removed []string
	var errs []error
	for _, c := range list.Items {
		pid, err := strconv.Atoi(c.Labels[LabelPID])
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			if goneAlready(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID, err))
			continue
		}
		removed = append(removed, c.ID)
	}
	return removed, errors.Join(errs...)
}

// goneAlready reports whether a remove failed only because someone else
// got there first: another plugin process starting at the same moment
// runs the same sweep, and a pool may be removing its own container.
func goneAlready(err error) bool {
	return cerrdefs.IsNotFound(err) || (cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress"))
}

// processExists reports whether pid names a process on this machine.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
