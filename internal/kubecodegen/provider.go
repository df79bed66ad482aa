package kubecodegen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
	"github.com/altairalabs/promptkit-sandbox/internal/mcpready"
	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Calls are the API requests the provider makes, as RBAC verb and
// resource (core group unless named): deploy/kubernetes/codegen grants
// exactly these. It never reads a Secret.
var Calls = []struct{ Verb, Group, Resource string }{
	{"create", "", "secrets"}, {"delete", "", "secrets"},
	{"create", "networking.k8s.io", "networkpolicies"}, {"delete", "networking.k8s.io", "networkpolicies"},
	{"create", "", "services"}, {"delete", "", "services"},
	{"create", "", "pods"}, {"get", "", "pods"}, {"delete", "", "pods"},
	{"get", "", "pods/log"}, // sandboxd's last words when it fails to come up
	// A cat of the sandbox container's cgroup files, for its usage in a
	// List that asks for it (usage.go); get for the WebSocket exec.
	{"create", "", "pods/exec"}, {"get", "", "pods/exec"},
	// A Lease per sandbox, renewed while the plugin holds it; the
	// expired ones of killed plugins are swept (lease.go).
	{"create", "coordination.k8s.io", "leases"}, {"patch", "coordination.k8s.io", "leases"},
	{"list", "coordination.k8s.io", "leases"}, {"delete", "coordination.k8s.io", "leases"},
	// Workspace volumes (volume.go): their claims made, found, listed
	// and, on a Release with Purge, deleted.
	{"create", "", "persistentvolumeclaims"}, {"get", "", "persistentvolumeclaims"},
	{"list", "", "persistentvolumeclaims"}, {"delete", "", "persistentvolumeclaims"},
}

// Provider serves kubectl_codegen.
type Provider struct {
	log    hclog.Logger
	boxes  *provision.Holder
	leases *leases
	pools  warmpool.Entries[pooledBox]

	mu sync.Mutex
	// attached reserves workspace volumes for the sandboxes of this
	// process (volume.go); places are where Volumes looks.
	attached map[string]string
	places   map[place]bool
}

var _ plugin.Provider = (*Provider)(nil)

// NewProvider returns the kubectl_codegen provider.
func NewProvider(log hclog.Logger) *Provider {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Provider{log: log, boxes: provision.NewHolder(log), leases: newLeases()}
}

// Check validates a kubectl_codegen configuration; an entry with `warm:
// N` starts filling its pool.
func (p *Provider) Check(name string, cfg map[string]any) error {
	set, err := parseConfig(cfg)
	if err == nil {
		p.remember(set)
		p.prewarm(name, cfg, set)
	}
	return err
}

// Release deletes the sandbox's objects and waits for its Pod to go. A
// workspace volume is kept, unless opts.Purge: then its claim is deleted
// too, once the Pod is gone.
func (p *Provider) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	return p.boxes.Release(ctx, id, opts)
}

// List returns the sandboxes held, without their tokens, each with
// whether its Pod runs (alive.go); with opts.Usage, what each uses now
// (usage.go).
func (p *Provider) List(ctx context.Context, opts plugin.ListOptions) ([]plugin.Provisioned, error) {
	p.checkPods(ctx)
	list := p.boxes.List()
	if opts.Usage {
		p.withUsage(ctx, list)
	}
	return list, nil
}

// Close drains the warm pools and releases every sandbox: nothing the
// plugin started outlives it.
func (p *Provider) Close() error {
	p.pools.Close()
	return p.boxes.Close()
}

// Provision creates a sandbox's objects and returns once an MCP
// initialize through its endpoint has been answered; with `warm: N` and
// no workspace_pvc, it hands out one of the entry's pooled sandboxes when
// one is ready (see pool.go). Whatever fails, nothing of it is left.
func (p *Provider) Provision(ctx context.Context, spec plugin.ProvisionSpec) (plugin.Provisioned, error) {
	set, err := parseConfig(spec.Config)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	if spec.Workspace != "" {
		return plugin.Provisioned{}, fmt.Errorf("%s: a workspace is a PersistentVolumeClaim in the cluster (a workspace volume, or the key workspace_pvc), not a host directory (%s)", Mode, spec.Workspace)
	}
	if spec.WorkspaceVolume != "" {
		if set.workspacePVC != "" {
			return plugin.Provisioned{}, fmt.Errorf("%s: the key workspace_pvc (%s) and a workspace volume (%s) exclude each other", Mode, set.workspacePVC, spec.WorkspaceVolume)
		}
		if !set.workspaceTmpfs.IsZero() {
			return plugin.Provisioned{}, fmt.Errorf("%s: the entry's workspace is a tmpfs (workspace_tmpfs); it cannot be a workspace volume (%s)", Mode, spec.WorkspaceVolume)
		}
		if err := checkVolumeName(spec.WorkspaceVolume); err != nil {
			return plugin.Provisioned{}, err
		}
		set.volume = spec.WorkspaceVolume
	}
	p.remember(set)
	b, start, err := p.claim(ctx, spec, set)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	b.info.Details["start"] = start
	p.log.Info("codegen sandbox", "sandbox", spec.Name, "id", b.info.ID, "start", start)
	if err := p.boxes.Add(b); err != nil {
		p.discard(b)
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, Mode, err)
	}
	return b.info, nil
}

// start creates a sandbox's objects, keeps its Lease, and returns once
// an MCP initialize through its endpoint has been answered. Whatever
// fails, nothing of it is left.
func (p *Provider) start(ctx context.Context, name string, set settings) (*box, error) {
	rc, ns, err := kubebox.ClientConfig(set.kubeconfig, set.context)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, Mode, err)
	}
	if set.namespace != "" {
		ns = set.namespace
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, Mode, err)
	}
	id := newID()
	b := &box{cs: cs, rc: rc, host: rc.Host, idle: set.idle, sleepIdle: set.sleepIdle, log: p.log, stopLease: make(chan struct{}),
		o: objects{id: id, name: podPrefix + id, ns: ns, sandboxName: name, set: set}}
	if set.volume != "" {
		if b.vol, err = p.reserve(rc.Host, ns, set.volume, id); err != nil {
			return nil, err
		}
	}
	if n, err := p.leases.sweep(ctx, b); err != nil {
		p.log.Warn("sweeping the sandboxes of plugins that are gone", "namespace", ns, "error", err)
	} else if n > 0 {
		p.log.Info("deleted the sandboxes of plugins that are gone", "namespace", ns, "count", n)
	}
	ok := false
	defer func() {
		if !ok {
			// A claim this provision made goes too: it holds nothing.
			made := b.vol != nil && b.vol.created
			b.purging.Store(made)
			err := b.teardown(context.WithoutCancel(ctx))
			if made {
				err = errors.Join(err, b.Purge(context.WithoutCancel(ctx)))
			}
			if err != nil {
				p.log.Warn("cleaning up a failed provision", "id", id, "error", err)
			}
		}
	}()
	if set.egress != nil {
		if b.egress, err = p.newEgressProxy(name, set.egress); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, Mode, err)
		}
	}
	token := newToken()
	svcIP, err := b.create(ctx, token, p.leases)
	if err != nil {
		return nil, err
	}
	b.upstream = "http://" + net.JoinHostPort(svcIP, strconv.Itoa(Port)) + mcpready.Path
	if b.fwd, err = loopback.New(loopback.TCP(net.JoinHostPort(svcIP, strconv.Itoa(Port)))); err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, Mode, err)
	}
	endpoint := "http://" + b.fwd.Addr() + mcpready.Path
	watch := b.watchPod()
	defer watch.stop()
	if err := mcpready.Wait(ctx, Mode, endpoint, token, watch); err != nil {
		return nil, err
	}
	details := map[string]string{
		"namespace": ns, "pod": b.o.name, "image": set.image, "image_by": set.imageBy, "languages": strings.Join(set.languages, ","), "network": set.network,
		"service_endpoint": fmt.Sprintf("http://%s.%s.svc:%d%s", b.o.name, ns, Port, mcpready.Path),
		"idle_timeout":     set.idle.String(),
	}
	if set.egress != nil {
		tunnel, stop := context.WithCancel(context.WithoutCancel(ctx))
		b.stopTunnel, b.tunnelDone = stop, make(chan struct{})
		go b.keepTunnel(tunnel, svcIP, token) // #nosec G118 -- held for the sandbox's life, past this call; teardown's stopEgress ends it
		details["egress"] = egress.Describe(set.egress)
	}
	if set.metrics {
		// Scraped on the plugin's host like the endpoint it hands out;
		// in the cluster, at the Service's metrics port.
		if b.metrics, err = loopback.New(loopback.TCP(net.JoinHostPort(svcIP, strconv.Itoa(MetricsPort)))); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, Mode, err)
		}
		details["metrics"] = "http://" + b.metrics.Addr() + "/metrics"
		details["service_metrics"] = fmt.Sprintf("http://%s.%s.svc:%d/metrics", b.o.name, ns, MetricsPort)
	}
	b.info = plugin.Provisioned{
		ID: id, Name: name, Mode: Mode, Endpoint: endpoint, Token: token, Created: time.Now(),
		Workspace: set.workspaceKind(),
		Details:   details,
	}
	if set.volume != "" {
		b.info.Workspace, b.info.WorkspaceVolume = "", set.volume
		details["workspace_volume"] = set.volume
	}
	go p.leases.keep(b, b.stopLease) // #nosec G118 -- the lease is kept for the sandbox's life, past this call; b.stopLease ends it
	ok = true
	return b, nil
}

// create makes the objects, owner first, then its Lease, and the
// NetworkPolicy before the Pod, and returns the Service's cluster IP.
func (b *box) create(ctx context.Context, token string, l *leases) (string, error) {
	o := b.o
	secret, err := b.cs.CoreV1().Secrets(o.ns).Create(ctx, o.secret(token, b.caBundle()), metav1.CreateOptions{})
	if err != nil {
		return "", b.apiErr("create Secret "+o.name, err)
	}
	b.created, b.owner = true, secret
	if _, err := b.cs.CoordinationV1().Leases(o.ns).Create(ctx, o.lease(secret, l, time.Now()), metav1.CreateOptions{}); err != nil {
		return "", b.apiErr("create Lease "+o.name, err)
	}
	if o.set.volume != "" {
		if err := b.attachVolume(ctx); err != nil {
			return "", err
		}
	}
	if _, err := b.cs.NetworkingV1().NetworkPolicies(o.ns).Create(ctx, o.networkPolicy(secret), metav1.CreateOptions{}); err != nil {
		return "", b.apiErr("create NetworkPolicy "+o.name, err)
	}
	svc, err := b.cs.CoreV1().Services(o.ns).Create(ctx, o.service(secret), metav1.CreateOptions{})
	if err != nil {
		return "", b.apiErr("create Service "+o.name, err)
	}
	if _, err := b.cs.CoreV1().Pods(o.ns).Create(ctx, o.pod(secret), metav1.CreateOptions{}); err != nil {
		return "", b.apiErr("create Pod "+o.name, err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", sandbox.Errorf(sandbox.KindStart, "%s: Service %s/%s has no cluster IP", Mode, o.ns, o.name)
	}
	return svc.Spec.ClusterIP, nil
}

// apiErr classifies an API failure while provisioning: an unreachable
// API server is KindTransport, anything refused KindStart (nothing was
// handed out), a refusal by RBAC pointing at the manifests.
func (b *box) apiErr(op string, err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: %s in namespace %s: forbidden (deploy/kubernetes/codegen/rbac.yaml grants what the provider needs)", Mode, op, b.o.ns), err)
	case isConnErr(err):
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: %s: API server %s unreachable", Mode, op, b.host), err)
	}
	return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: %s in namespace %s", Mode, op, b.o.ns), err)
}

func isConnErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || (errors.As(err, &ne) && ne.Timeout())
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "cg-" + hex.EncodeToString(b[:])
}

// newToken is 32 random bytes in hex: 64 characters, past sandboxd's
// minimum for a listener beyond loopback.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
