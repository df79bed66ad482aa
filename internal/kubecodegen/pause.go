package kubecodegen

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	if b.o.set.claimName() == "" {
		return ErrEmptyDirPause
	}
	b.refuse(mcpready.Refusal(fmt.Sprintf(
		"codegen sandbox %s is paused (its Pod is deleted, its workspace kept): resume it (promptkit-sandbox codegen resume %s) before calling it", b.info.ID, b.info.ID)))
	if b.paused.Load() {
		return nil // paused while idle (Sleep): now until Resume
	}
	return b.stopPod(ctx)
}

// stopPod deletes the sandbox's Pod, with its grace period, and waits
// until it is gone; the sandbox is paused from the delete on. A delete
// that fails opens the endpoints again. pauseMu is held.
func (b *box) stopPod(ctx context.Context) error {
	o := b.o
	// A Pod already gone (deleted by someone, alive.go) is paused as it is.
	if err := b.cs.CoreV1().Pods(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		b.serve()
		return b.apiErr("delete Pod "+o.name, err)
	}
	// Paused from here: the Pod is going, whatever the wait says; how
	// the last one ended no longer matters.
	b.paused.Store(true)
	b.died.Store(nil)
	ctx, cancel := context.WithTimeout(ctx, goneTimeout)
	defer cancel()
	return b.podGone(ctx)
}

// Resume starts a new Pod on the sandbox's claim and returns once an MCP
// initialize is answered; a Pod that does not come up is deleted again,
// and the sandbox stays paused.
func (b *box) Resume(ctx context.Context) error {
	b.pauseMu.Lock()
	defer b.pauseMu.Unlock()
	if !b.paused.Load() {
		return nil
	}
	if err := b.startPod(ctx); err != nil {
		return err
	}
	b.paused.Store(false)
	b.serve()
	return nil
}

// startPod makes the sandbox's Pod anew, on its claim, and waits until
// sandboxd answers MCP in it, at the Service (the endpoints may be
// refusing, or holding requests for a wake); a Pod that does not come up
// is deleted again. pauseMu is held.
func (b *box) startPod(ctx context.Context) (err error) {
	o := b.o
	// A Pause whose wait ran out may have left the Pod terminating.
	if err := b.podGone(ctx); err != nil {
		return err
	}
	if _, err := b.cs.CoreV1().Pods(o.ns).Create(ctx, o.pod(b.owner), metav1.CreateOptions{}); err != nil {
		return b.apiErr("create Pod "+o.name, err)
	}
	defer func() {
		if err != nil {
			zero := int64(0)
			_ = b.cs.CoreV1().Pods(o.ns).Delete(context.WithoutCancel(ctx), o.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}()
	watch := b.watchPod()
	defer watch.stop()
	return mcpready.Wait(ctx, Mode, b.upstream, b.info.Token, watch)
}

var _ provision.Sleeper = (*box)(nil)

// SleepsWhenIdle is on_idle: pause, for a sandbox whose workspace is a
// claim: one on an emptyDir is released when idle, as its files would
// go with its Pod.
func (b *box) SleepsWhenIdle() bool { return b.sleepIdle && b.o.set.claimName() != "" }

// Sleep deletes the Pod of a sandbox nothing is connected to, as Pause
// does; its next MCP request starts a new one on the same claim, waits
// until it answers, and then goes through (its metrics port refuses
// meanwhile: a scrape is not a use).
func (b *box) Sleep(ctx context.Context) error {
	b.pauseMu.Lock()
	defer b.pauseMu.Unlock()
	if b.paused.Load() {
		return nil
	}
	if b.metrics != nil {
		b.metrics.Refuse(mcpready.Refusal(fmt.Sprintf("codegen sandbox %s is paused while idle: its next MCP call resumes it", b.info.ID)))
	}
	b.fwd.Sleep(b.wake, func(err error) loopback.Answer {
		return mcpready.Refusal(fmt.Sprintf("codegen sandbox %s was paused while idle and could not be resumed: %v", b.info.ID, err))
	})
	return b.stopPod(ctx)
}

// wake resumes a sandbox paused while idle for the request that woke
// it, within wakeTimeout: the request waits for it.
func (b *box) wake() error {
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	return b.Resume(ctx)
}

// wakeTimeout bounds a wake: a Pod scheduled, its image present, and
// sandboxd started (seconds), or the waiting request is told why.
const wakeTimeout = 2 * time.Minute

// Paused reports whether the sandbox's Pod is deleted by a Pause.
func (b *box) Paused() bool { return b.paused.Load() }

// refuse makes the endpoints answer every request with answer.
func (b *box) refuse(answer loopback.Answer) {
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
