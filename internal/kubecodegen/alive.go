package kubecodegen

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// A sandbox's Pod can end by itself: the kubelet evicts it (an emptyDir
// past workspace_size, node pressure), sandboxd exits (the Pod never
// restarts it), or someone deletes it. Nothing watches the Pods between
// calls, which would cost a watch per namespace for something only
// `codegen ls` shows: List looks at each Pod instead, and a box whose
// Pod has ended is a provision.Mortal saying why until it is released,
// or until a Resume gives it a new Pod.

var _ provision.Mortal = (*box)(nil)

// aliveTimeout bounds the Pod reads of one List, as usageTimeout does
// its usage reads.
const aliveTimeout = 2 * time.Second

// Dead says how the sandbox's Pod ended, or "" while it runs (or as far
// as the last List could tell).
func (b *box) Dead() string {
	if why := b.died.Load(); why != nil {
		return *why
	}
	return ""
}

// checkPod reads the sandbox's Pod and records it as dead when it has
// ended or is gone. A paused sandbox has no Pod by design, and one being
// paused or resumed is left for the next List: its Pod is meant to come
// and go meanwhile. An API error says nothing about the Pod.
func (b *box) checkPod(ctx context.Context) {
	if !b.pauseMu.TryLock() {
		return
	}
	defer b.pauseMu.Unlock()
	if b.paused.Load() || b.died.Load() != nil {
		return
	}
	pod, err := b.cs.CoreV1().Pods(b.o.ns).Get(ctx, b.o.name, metav1.GetOptions{})
	var why string
	switch {
	case apierrors.IsNotFound(err):
		why = "the Pod was deleted"
	case err != nil:
		b.log.Debug("reading a sandbox's Pod", "id", b.o.id, "error", err)
		return
	case pod.DeletionTimestamp != nil:
		why = "the Pod is being deleted"
	default:
		why = podFailure(pod)
	}
	if why != "" {
		b.died.Store(&why)
	}
}

// checkPods runs checkPod for every sandbox held, at once.
func (p *Provider) checkPods(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, aliveTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, info := range p.boxes.List() {
		if b, ok := p.boxes.Get(info.ID); ok {
			if b, ok := b.(*box); ok {
				wg.Go(func() { b.checkPod(ctx) })
			}
		}
	}
	wg.Wait()
}
