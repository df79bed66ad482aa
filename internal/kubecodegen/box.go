package kubecodegen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// box is one provisioned sandbox.
type box struct {
	cs   kubernetes.Interface
	rc   *rest.Config // for the exec that reads its usage (usage.go)
	host string
	o    objects
	idle time.Duration
	// sleepIdle: on_idle: pause (pause.go's Sleep).
	sleepIdle bool
	created   bool // the Secret exists: there is something to delete
	fwd       *loopback.Forwarder
	metrics   *loopback.Forwarder // /metrics, with metrics: true
	// upstream is sandboxd's MCP URL at the Service, which the host
	// reaches: a new Pod's readiness is checked there, past the
	// forwarder, which may hold requests for it (a Sleep).
	upstream string
	info     plugin.Provisioned
	log      hclog.Logger
	// stopLease ends the renewal of the sandbox's Lease (see lease.go).
	stopLease chan struct{}
	stopOnce  sync.Once
	// claimed is when a pooled sandbox was handed out.
	claimed time.Time
	// vol is the workspace volume mounted as its workspace; nil for an
	// emptyDir or a workspace_pvc.
	vol *workspaceVolume
	// purging: a Purge follows the teardown, and the volume stays
	// reserved in this process until the Purge has deleted it.
	purging atomic.Bool
	// owner is the sandbox's Secret, the owner of a Pod made anew by a
	// Resume (pause.go).
	owner *corev1.Secret
	// pauseMu orders Pause, Resume and the state they keep.
	pauseMu sync.Mutex
	paused  atomic.Bool
	// egress is the sandbox's proxy, with egress rules (egress.go);
	// stopTunnel ends the goroutine that holds its tunnel, which closes
	// tunnelDone.
	egress     *egress.Proxy
	stopTunnel context.CancelFunc
	tunnelDone chan struct{}
	// died is why the sandbox's Pod ended, once a List saw it (alive.go).
	died atomic.Pointer[string]
}

func (b *box) Info() plugin.Provisioned           { return b.info }
func (b *box) IdleTimeout() time.Duration         { return b.idle }
func (b *box) Teardown(ctx context.Context) error { return b.teardown(ctx) }

func (b *box) IdleSince() time.Time {
	// A pooled sandbox's port was last used by the pool's readiness
	// check, long before its claim.
	t := b.fwd.IdleSince()
	if !t.IsZero() && t.Before(b.claimed) {
		return b.claimed
	}
	return t
}

// goneTimeout bounds the wait for the Pod to go once deleted.
const goneTimeout = 2 * time.Minute

// teardown closes the endpoint, deletes the objects (the Pod at once, no
// grace: the sandbox is being thrown away) and waits until the Pod is
// gone. The Secret goes last: were the others' deletes to fail, the
// garbage collector still takes them with their owner. A workspace
// volume's claim is kept (only Purge deletes it).
func (b *box) teardown(ctx context.Context) error {
	b.stopOnce.Do(func() { close(b.stopLease) })
	for _, f := range []*loopback.Forwarder{b.fwd, b.metrics} {
		if f != nil {
			f.Close()
		}
	}
	b.stopEgress()
	if b.vol != nil && !b.purging.Load() {
		defer b.vol.detach()
	}
	if !b.created {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, goneTimeout)
	defer cancel()
	o, zero := b.o, int64(0)
	var errs []error
	del := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: delete %s %s/%s: %w", Mode, what, o.ns, o.name, err))
		}
	}
	del("Pod", b.cs.CoreV1().Pods(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	del("Service", b.cs.CoreV1().Services(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{}))
	del("NetworkPolicy", b.cs.NetworkingV1().NetworkPolicies(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{}))
	del("Lease", b.cs.CoordinationV1().Leases(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{}))
	background := metav1.DeletePropagationBackground
	del("Secret", b.cs.CoreV1().Secrets(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{PropagationPolicy: &background}))
	if err := b.podGone(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// podGone waits until the sandbox's Pod is gone.
func (b *box) podGone(ctx context.Context) error {
	return waitGone(ctx, "Pod "+b.o.ns+"/"+b.o.name, func(ctx context.Context) error {
		_, err := b.cs.CoreV1().Pods(b.o.ns).Get(ctx, b.o.name, metav1.GetOptions{})
		return err
	})
}

// podWatch polls the sandbox's Pod while Provision waits for sandboxd: it
// tells mcpready when the Pod can no longer come up, and why.
type podWatch struct {
	b      *box
	exited chan struct{}
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	why   string // why the Pod cannot come up
	state string // what the Pod last waited for, while it still may
}

// watchInterval is how often the Pod is looked at.
const watchInterval = 250 * time.Millisecond

// stuck are the waiting reasons a Pod does not recover from by itself.
var stuck = []string{"ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

func (b *box) watchPod() *podWatch {
	w := &podWatch{b: b, exited: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *podWatch) run() {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		pod, err := w.b.cs.CoreV1().Pods(w.b.o.ns).Get(ctx, w.b.o.name, metav1.GetOptions{})
		cancel()
		if err != nil {
			if apierrors.IsNotFound(err) {
				w.exit("the Pod was deleted")
				return
			}
			continue
		}
		if why := podFailure(pod); why != "" {
			w.exit(why)
			return
		}
		w.mu.Lock()
		w.state = podWaiting(pod)
		w.mu.Unlock()
	}
}

// podWaiting says what pod still waits for (scheduling, its container's
// start), or "" when nothing shows: a Provision that runs out of time
// says so instead of only that sandboxd did not answer (an unschedulable
// Pod has no log).
func podWaiting(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return strings.TrimSpace(fmt.Sprintf("the Pod is not scheduled (%s): %s", c.Reason, c.Message))
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if wt := cs.State.Waiting; wt != nil {
			return strings.TrimSpace(fmt.Sprintf("the container is waiting (%s): %s", wt.Reason, wt.Message))
		}
	}
	return ""
}

// podFailure says why pod cannot come up, or "" while it still may.
func podFailure(pod *corev1.Pod) string {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return fmt.Sprintf("the Pod ended (phase %s): %s", pod.Status.Phase, pod.Status.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("sandboxd exited %d (%s): %s", t.ExitCode, t.Reason, t.Message)
		}
		if wt := cs.State.Waiting; wt != nil {
			for _, r := range stuck {
				if wt.Reason == r {
					return fmt.Sprintf("the container cannot start: %s: %s (image %s: build it with make sandboxd-image and load it on the nodes)", wt.Reason, wt.Message, cs.Image)
				}
			}
		}
	}
	return ""
}

func (w *podWatch) exit(why string) {
	w.mu.Lock()
	w.why = why
	w.mu.Unlock()
	close(w.exited)
}

func (w *podWatch) stop() { w.once.Do(func() { close(w.done) }) }

// Exited is closed once the Pod cannot come up.
func (w *podWatch) Exited() <-chan struct{} { return w.exited }

// LastOutput is why the Pod failed (or what it still waits for) and the
// end of sandboxd's log.
func (w *podWatch) LastOutput() string {
	w.mu.Lock()
	why := w.why
	if why == "" {
		why = w.state
	}
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tail := int64(20)
	raw, err := w.b.cs.CoreV1().Pods(w.b.o.ns).GetLogs(w.b.o.name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	logs := strings.Join(strings.Fields(strings.ReplaceAll(string(raw), "\n", " | ")), " ")
	if err != nil {
		logs = ""
	}
	return strings.TrimSpace(why + " " + logs)
}
