package kubecodegen

import (
	"context"
	"errors"
	"io"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A fork is a new sandbox of the same entry whose workspace starts as a
// copy of another's, independent afterwards: same image and settings, an
// emptyDir workspace of its own (never the source's claim, which one Pod
// mounts at a time). The copy is a tar in the source's container piped
// into a tar in the fork's, through two execs (pods/exec, which the Role
// grants already): both run as the sandboxes' user, in their own Pods,
// so the plugin never reads the agent's files itself and a symlink in
// the workspace is copied as a symlink. Kubernetes cannot freeze the
// source, so the copy is of a running sandbox: a file written during it
// may be caught half-written (tar's "file changed as we read it" is
// no failure).

var _ plugin.Forker = (*Provider)(nil)

// Fork makes count new sandboxes whose workspaces start as copies of the
// sandbox id's; all or none.
func (p *Provider) Fork(ctx context.Context, id string, count int) ([]plugin.Provisioned, error) {
	src, err := provision.ForkSource[*box](p.boxes, id, count, Mode)
	if err != nil {
		return nil, err
	}
	if src.Paused() {
		return nil, sandbox.Errorf(sandbox.KindStart, "fork %s: the sandbox is paused and has no Pod to copy from: resume it first (promptkit-sandbox codegen resume %s)", id, id)
	}
	set := src.o.set
	set.volume, set.workspacePVC = "", ""
	out, err := p.boxes.AddForks(ctx, id, count, func() (provision.Box, error) {
		b, err := p.start(ctx, src.info.Name, set)
		if err != nil {
			return nil, err
		}
		if err := copyWorkspace(ctx, src, b); err != nil {
			p.discard(b)
			return nil, err
		}
		return b, nil
	}, func(b provision.Box) { p.discard(b.(*box)) })
	if err != nil {
		return nil, err
	}
	p.log.Info("codegen sandbox forked", "id", id, "count", count)
	return out, nil
}

// copyWorkspace copies src's workspace into dst's, which is empty.
func copyWorkspace(ctx context.Context, src, dst *box) error {
	ws := codegenimage.WorkspaceDir
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// The workspace's entries, not "." itself: the fork's root is
		// its own (the kubelet's, its mode and owner not the agent's to
		// set). GNU tar exits 1 when a file changed while it was read.
		err := src.exec(ctx, "tar of the workspace", "cd "+ws+" && find . -mindepth 1 -maxdepth 1 -print0 | tar -cf - --null -T - ; [ $? -le 1 ]", nil, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	err := dst.exec(ctx, "untar of the copied workspace", "cd "+ws+" && exec tar -xf - --no-same-owner --no-overwrite-dir", pr, io.Discard)
	_ = pr.Close() // a reader that failed stops the writer
	if werr := <-done; werr != nil {
		err = errors.Join(werr, err)
	}
	if err != nil {
		return sandbox.NewError(sandbox.KindStart, Mode+": copy the workspace", err)
	}
	return nil
}
