package kubecodegen

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
	"github.com/altairalabs/promptkit-sandbox/internal/mcpready"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// Kubernetes cannot freeze a Pod, so a paused kubectl_codegen sandbox
// has none: Pause deletes its Pod and keeps the rest (Secret and token,
// Lease, Service, NetworkPolicy, and the claim its workspace is on), and
// Resume starts a new Pod on the same claim, with the same token behind
// the same endpoint. What lived only in the Pod goes: processes and
// background shells, /tmp, MCP sessions (a client connects anew). Only a
// sandbox whose workspace is a claim (a workspace volume or
// workspace_pvc) can pause: an emptyDir would go with the Pod. While
// paused, the endpoint answers every request with 409 and why, at once,
// as docker_codegen's does.

// ErrEmptyDirPause is a Pause of a sandbox whose workspace is an
// emptyDir; it is a plugin.ErrCannotPause, with the reason.
var ErrEmptyDirPause error = cannotPause(Mode + ": its workspace is an emptyDir, which would go with its Pod: " +
	"only a sandbox on a workspace volume (codegen up --workspace-volume NAME) or a workspace_pvc can pause")

// cannotPause is a plugin.ErrCannotPause that says why.
type cannotPause string

func (e cannotPause) Error() string        { return string(e) }
func (e cannotPause) Is(target error) bool { return target == plugin.ErrCannotPause }

var (
	_ provision.Pausable = (*box)(nil)
	_ plugin.Pauser      = (*Provider)(nil)
)

// Pause deletes the sandbox's Pod and waits until it is gone; its
// endpoint refuses from the start.
func (b *box) Pause(ctx context.Context) error {
	b.pauseMu.Lock()
	defer b.pauseMu.Unlock()
	if b.paused.Load() {
		return nil
	}
	if b.o.set.claimName() == "" {
		return ErrEmptyDirPause
	}
	b.refuse(mcpready.Refusal(fmt.Sprintf(
		"codegen sandbox %s is paused (its Pod is deleted, its workspace kept): resume it (promptkit-sandbox codegen resume %s) before calling it", b.info.ID, b.info.ID)))
	o := b.o
	if err := b.cs.CoreV1().Pods(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{}); err != nil {
		b.serve()
		return b.apiErr("delete Pod "+o.name, err)
	}
	// Paused from here: the Pod is going, whatever the wait says.
	b.paused.Store(true)
	ctx, cancel := context.WithTimeout(ctx, goneTimeout)
	defer cancel()
	return b.podGone(ctx)
}

// Resume starts a new Pod on the sandbox's claim and returns once an MCP
// initialize through its endpoint is answered; a Pod that does not come
// up is deleted again, and the sandbox stays paused.
func (b *box) Resume(ctx context.Context) (err error) {
	b.pauseMu.Lock()
	defer b.pauseMu.Unlock()
	if !b.paused.Load() {
		return nil
	}
	o := b.o
	// A Pause whose wait ran out may have left the Pod terminating.
	if err := b.podGone(ctx); err != nil {
		return err
	}
	if _, err := b.cs.CoreV1().Pods(o.ns).Create(ctx, o.pod(b.owner), metav1.CreateOptions{}); err != nil {
		return b.apiErr("create Pod "+o.name, err)
	}
	refusal := b.refusal
	defer func() {
		if err != nil {
			b.refuse(refusal)
			zero := int64(0)
			_ = b.cs.CoreV1().Pods(o.ns).Delete(context.WithoutCancel(ctx), o.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}()
	b.serve()
	watch := b.watchPod()
	defer watch.stop()
	if err := mcpready.Wait(ctx, Mode, b.info.Endpoint, b.info.Token, watch); err != nil {
		return err
	}
	b.paused.Store(false)
	return nil
}

// Paused reports whether the sandbox's Pod is deleted by a Pause.
func (b *box) Paused() bool { return b.paused.Load() }

// refuse makes the endpoints answer every request with answer.
func (b *box) refuse(answer loopback.Answer) {
	b.refusal = answer
	for _, f := range []*loopback.Forwarder{b.fwd, b.metrics} {
		if f != nil {
			f.Refuse(answer)
		}
	}
}

// serve lets requests through the endpoints again.
func (b *box) serve() {
	for _, f := range []*loopback.Forwarder{b.fwd, b.metrics} {
		if f != nil {
			f.Serve()
		}
	}
}

// Pause pauses the sandbox id (see box.Pause).
func (p *Provider) Pause(ctx context.Context, id string) error { return p.boxes.Pause(ctx, id) }

// Resume resumes the sandbox id.
func (p *Provider) Resume(ctx context.Context, id string) error { return p.boxes.Resume(ctx, id) }
