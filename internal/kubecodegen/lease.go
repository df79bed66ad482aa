package kubecodegen

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// A plugin that is killed cannot delete what it made, and nothing in the
// cluster knows the plugin is gone: each sandbox therefore has a Lease
// (owned by its Secret, like the rest) that its plugin renews while it
// holds the sandbox. The next Provision in the namespace, by any plugin,
// deletes the Secret of every sandbox whose Lease has expired, and the
// garbage collector takes the rest with it.

// Lease timing: renewed every leaseRenew, expired leaseDuration after
// its last renewal. A plugin killed leaves its sandboxes for at least
// leaseDuration, then until the next Provision in their namespace.
const (
	defaultLeaseRenew    = 10 * time.Second
	defaultLeaseDuration = 60 * time.Second
)

// leases renews the Leases of the sandboxes a Provider holds and sweeps
// the expired ones of others.
type leases struct {
	holder          string // this plugin process: host/pid
	renew, duration time.Duration

	mu        sync.Mutex
	lastSweep map[string]time.Time // by namespace
}

func newLeases() *leases {
	host, _ := os.Hostname()
	return &leases{
		holder: host + "/" + strconv.Itoa(os.Getpid()),
		renew:  defaultLeaseRenew, duration: defaultLeaseDuration,
		lastSweep: map[string]time.Time{},
	}
}

// lease is the sandbox's Lease, owned by its Secret.
func (o objects) lease(owner *corev1.Secret, l *leases, now time.Time) *coordinationv1.Lease {
	t := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: o.meta(owner),
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.holder),
			LeaseDurationSeconds: ptr.To(int32(max(l.duration/time.Second, 1))), // #nosec G115 -- duration is defaultLeaseDuration (60 s) or a test's few seconds
			AcquireTime:          &t,
			RenewTime:            &t,
		},
	}
}

// keep renews b's Lease until stop is closed. A failed renewal is
// logged: the sandbox works on, and the next one may succeed before the
// Lease expires.
func (l *leases) keep(b *box, stop <-chan struct{}) {
	t := time.NewTicker(l.renew)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		patch := fmt.Appendf(nil, `{"spec":{"renewTime":%q}}`, metav1.NewMicroTime(time.Now()).Format(metav1.RFC3339Micro))
		ctx, cancel := context.WithTimeout(context.Background(), l.renew)
		_, err := b.cs.CoordinationV1().Leases(b.o.ns).Patch(ctx, b.o.name, types.MergePatchType, patch, metav1.PatchOptions{})
		cancel()
		if err != nil && b.log != nil {
			b.log.Warn("renewing the sandbox's lease", "id", b.o.id, "error", err)
		}
	}
}

// sweep deletes the Secrets of the sandboxes in ns whose Leases have
// expired (their plugins are gone), at most once per renewal interval
// per namespace. It answers how many it deleted.
func (l *leases) sweep(ctx context.Context, b *box) (int, error) {
	ns := b.o.ns
	l.mu.Lock()
	if last, ok := l.lastSweep[ns]; ok && time.Since(last) < l.renew {
		l.mu.Unlock()
		return 0, nil
	}
	l.lastSweep[ns] = time.Now()
	l.mu.Unlock()
	list, err := b.cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelMode: Mode}).String(),
	})
	if err != nil {
		return 0, fmt.Errorf("list the sandboxes' leases in %s: %w", ns, err)
	}
	n := 0
	background := metav1.DeletePropagationBackground
	for _, lease := range list.Items {
		owner, ok := ownerSecret(lease)
		if !ok || !expired(lease, time.Now()) {
			continue
		}
		// Only the Secret the Lease names as its owner, by UID: a Lease
		// someone else made cannot point the sweep at another Secret.
		err := b.cs.CoreV1().Secrets(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{
			PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &owner.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue // gone already, or not the Secret the Lease was made with
		}
		if err != nil {
			return n, fmt.Errorf("delete the expired sandbox %s/%s: %w", ns, lease.Name, err)
		}
		n++
	}
	return n, nil
}

// expired says whether lease was last renewed longer ago than its
// duration. A Lease without a renewal time or duration never expires:
// it is not one this provider made.
func expired(lease coordinationv1.Lease, now time.Time) bool {
	s := lease.Spec
	if s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return false
	}
	return now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}

// ownerSecret is the sandbox Secret that owns lease: one of this
// provider's names (sandboxd-ID, as the Lease's own).
func ownerSecret(lease coordinationv1.Lease) (metav1.OwnerReference, bool) {
	for _, ref := range lease.OwnerReferences {
		if ref.APIVersion == "v1" && ref.Kind == "Secret" && ref.Name == lease.Name && strings.HasPrefix(ref.Name, podPrefix) && ref.UID != "" {
			return ref, true
		}
	}
	return metav1.OwnerReference{}, false
}
