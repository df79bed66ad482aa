package kubecodegen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A workspace volume (`codegen up --workspace-volume NAME`) is a
// PersistentVolumeClaim named NAME in the sandbox's namespace, mounted at
// the workspace instead of the emptyDir: made by the provider on first
// use (workspace_size, in storage_class or the cluster's default class),
// labelled as ours, and owned by nothing, so the garbage collector
// leaves it when the sandbox's Secret goes; only a Release with Purge
// deletes it. The provider never mounts a claim it did not make: one of
// that name without its labels is refused.
//
// Which sandbox a volume is attached to is on the sandbox's Lease (label
// LabelVolume), which the provider already lists and renews: a Lease
// alive names the sandbox holding the volume, an expired one a sandbox
// whose plugin is gone. The attach looks after creating its own Lease,
// so two plugins attaching the same volume at once see each other's.

// Labels of a workspace volume's claim (with LabelMode, LabelName and
// LabelManagedBy) and of the Lease of the sandbox it is attached to.
const (
	LabelKind     = "promptkit.altairalabs.ai/kind"
	KindWorkspace = "workspace"
	LabelVolume   = "promptkit.altairalabs.ai/workspace-volume"
)

// Errors of a workspace volume that cannot be attached; both are
// sandbox.KindStart.
var (
	// ErrVolumeNotOurs: a claim of that name exists and was not made by
	// this provider.
	ErrVolumeNotOurs = errors.New("the PersistentVolumeClaim exists and was not made by promptkit-sandbox")
	// ErrVolumeInUse: the volume is attached to another sandbox.
	ErrVolumeInUse = errors.New("the volume is attached to another sandbox")
)

// checkVolumeName refuses a name that cannot be a claim's name and a
// label's value (the Lease's LabelVolume): a DNS-1123 label.
func checkVolumeName(name string) error {
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Errorf("%s: workspace volume %q: it names a PersistentVolumeClaim and a label: %s", Mode, name, msgs[0])
	}
	return nil
}

// workspaceVolume is a sandbox's attached workspace volume.
type workspaceVolume struct {
	name string
	// created: this provision made the claim (and a failed one deletes
	// it: an empty claim would be the only thing left of it).
	created bool
	// detach gives up this process's reservation of the name.
	detach func()
}

// reserve holds the volume (by API server, namespace and name) for
// sandbox id in this process: the Lease check sees other processes'
// sandboxes only once their Leases exist.
func (p *Provider) reserve(host, ns, name, id string) (*workspaceVolume, error) {
	key := host + "\x00" + ns + "\x00" + name
	p.mu.Lock()
	defer p.mu.Unlock()
	if other, ok := p.attached[key]; ok {
		return nil, sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w (%s); release it first (codegen down %s)", Mode, name, ErrVolumeInUse, other, other)
	}
	if p.attached == nil {
		p.attached = map[string]string{}
	}
	p.attached[key] = id
	return &workspaceVolume{name: name, detach: func() {
		p.mu.Lock()
		if p.attached[key] == id {
			delete(p.attached, key)
		}
		p.mu.Unlock()
	}}, nil
}

// claim is the workspace volume's PersistentVolumeClaim: owned by
// nothing, so that it outlives the sandbox.
func (o objects) claim() *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: o.set.volume, Namespace: o.ns, Labels: map[string]string{
			LabelMode: Mode, LabelName: appName, LabelManagedBy: managedBy, LabelKind: KindWorkspace,
		}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: o.set.workspaceSize},
			},
		},
	}
	if o.set.storageClass != "" {
		c.Spec.StorageClassName = &o.set.storageClass
	}
	return c
}

// claimName is the claim mounted at the workspace: the workspace
// volume's or workspace_pvc's; "" for an emptyDir.
func (s settings) claimName() string {
	if s.volume != "" {
		return s.volume
	}
	return s.workspacePVC
}

// attachVolume finds the workspace volume's claim, or makes it, once the
// sandbox's Lease (which names the volume) exists. It refuses a volume
// another sandbox's live Lease names, and a claim not labelled as ours
// or being deleted.
func (b *box) attachVolume(ctx context.Context) error {
	o, name := b.o, b.o.set.volume
	users, err := volumeUsers(ctx, b.cs, o.ns, name, o.id)
	if err != nil {
		return b.apiErr("list the Leases of workspace volume "+name, err)
	}
	if len(users) > 0 {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w (sandbox %s); release it first (codegen down %s)", Mode, name, ErrVolumeInUse, users[0], users[0])
	}
	claims := b.cs.CoreV1().PersistentVolumeClaims(o.ns)
	got, err := claims.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		got, err = claims.Create(ctx, o.claim(), metav1.CreateOptions{})
		if err == nil {
			b.vol.created = true
			return nil
		}
		if apierrors.IsAlreadyExists(err) {
			got, err = claims.Get(ctx, name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return b.apiErr("PersistentVolumeClaim "+name, err)
	}
	return checkOurs(got)
}

// checkOurs refuses a claim not labelled as a workspace volume of this
// provider, or one being deleted.
func checkOurs(c *corev1.PersistentVolumeClaim) error {
	if c.Labels[LabelManagedBy] != managedBy || c.Labels[LabelKind] != KindWorkspace {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: %w in namespace %s (it lacks the labels %s=%s and %s=%s); "+
			"pick another name, or mount it with the key workspace_pvc", Mode, c.Name, ErrVolumeNotOurs, c.Namespace, LabelManagedBy, managedBy, LabelKind, KindWorkspace)
	}
	if c.DeletionTimestamp != nil {
		return sandbox.Errorf(sandbox.KindStart, "%s: workspace volume %s: its PersistentVolumeClaim is being deleted; try again once it is gone", Mode, c.Name)
	}
	return nil
}

// volumeUsers are the ids of the sandboxes other than self whose live
// Leases name the volume.
func volumeUsers(ctx context.Context, cs kubernetes.Interface, ns, name, self string) ([]string, error) {
	list, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelMode: Mode, LabelVolume: name}).String(),
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range list.Items {
		if id := l.Labels[LabelID]; id != self && !expired(l, time.Now()) {
			out = append(out, id)
		}
	}
	return out, nil
}

// deleteClaim deletes the workspace volume's claim and waits until it is
// gone (the PVC protection holds it while a Pod mounts it), so that the
// next sandbox naming the volume makes a new one.
func (b *box) deleteClaim(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, goneTimeout)
	defer cancel()
	claims := b.cs.CoreV1().PersistentVolumeClaims(b.o.ns)
	name := b.vol.name
	if err := claims.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: delete workspace volume %s/%s: %w", Mode, b.o.ns, name, err)
	}
	return waitGone(ctx, "PersistentVolumeClaim "+b.o.ns+"/"+name, func(ctx context.Context) error {
		_, err := claims.Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

// waitGone polls get until it answers NotFound.
func waitGone(ctx context.Context, what string, get func(context.Context) error) error {
	for {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s still there after its delete (last: %v)", Mode, what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PurgeFollows makes a box a provision.PurgeFollower: its teardown keeps
// the volume reserved in this process for the Purge that follows.
func (b *box) PurgeFollows() { b.purging.Store(true) }

// Purge makes a box a provision.Purger: a Release with Purge deletes its
// workspace volume, after the teardown has deleted the Pod mounting it.
func (b *box) Purge(ctx context.Context) error {
	if b.vol == nil {
		return nil
	}
	defer b.vol.detach()
	return b.deleteClaim(ctx)
}

// place is where the provider looks for workspace volumes: an API
// server's namespace, as a configuration names it.
type place struct{ kubeconfig, context, namespace string }

// String says where the place is, for an error: the configuration it
// is reached through, as written.
func (pl place) String() string {
	kubeconfig := pl.kubeconfig
	if kubeconfig == "" {
		kubeconfig = "the default kubeconfig"
	}
	s := "through " + kubeconfig
	if pl.context != "" {
		s += ", context " + pl.context
	}
	if pl.namespace != "" {
		s += ", namespace " + pl.namespace
	}
	return s
}

// remember adds the place of a configuration the provider was given.
func (p *Provider) remember(set settings) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.places == nil {
		p.places = map[place]bool{}
	}
	p.places[place{set.kubeconfig, set.context, set.namespace}] = true
}

// Volumes makes the provider a plugin.VolumeKeeper: the workspace
// volumes in the namespaces of the configurations it was given (checked
// or provisioned), each with the sandbox whose live Lease names it. A
// namespace it cannot list is an error beside the others' volumes.
func (p *Provider) Volumes(ctx context.Context) ([]plugin.WorkspaceVolume, error) {
	p.mu.Lock()
	places := make([]place, 0, len(p.places))
	for pl := range p.places {
		places = append(places, pl)
	}
	p.mu.Unlock()
	// Side by side: a cluster that does not answer costs the others no
	// time, and hides none of their volumes.
	type listed struct {
		vols []plugin.WorkspaceVolume
		err  error
	}
	results := make([]listed, len(places))
	var wg sync.WaitGroup
	for i, pl := range places {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].vols, results[i].err = volumesAt(ctx, pl)
		}()
	}
	wg.Wait()
	var out []plugin.WorkspaceVolume
	var errs []error
	seen := map[string]bool{}
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		for _, v := range r.vols {
			if key := v.Details["server"] + "\x00" + v.Details["namespace"] + "\x00" + v.Name; !seen[key] {
				seen[key] = true
				out = append(out, v)
			}
		}
	}
	return out, errors.Join(errs...)
}

// volumesAt lists the workspace volumes of one place.
func volumesAt(ctx context.Context, pl place) ([]plugin.WorkspaceVolume, error) {
	rc, ns, err := kubebox.ClientConfig(pl.kubeconfig, pl.context)
	if err != nil {
		return nil, fmt.Errorf("%s: list workspace volumes %s: %w", Mode, pl, err)
	}
	if pl.namespace != "" {
		ns = pl.namespace
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: list workspace volumes: %w", Mode, err)
	}
	claims, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelManagedBy: managedBy, LabelKind: KindWorkspace}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list workspace volumes in namespace %s of %s: %w", Mode, ns, rc.Host, err)
	}
	if len(claims.Items) == 0 {
		return nil, nil
	}
	leases, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelMode + "=" + Mode + "," + LabelVolume})
	if err != nil {
		return nil, fmt.Errorf("%s: list the Leases of workspace volumes in namespace %s of %s: %w", Mode, ns, rc.Host, err)
	}
	attached := map[string]string{}
	for _, l := range leases.Items {
		if !expired(l, time.Now()) {
			attached[l.Labels[LabelVolume]] = l.Labels[LabelID]
		}
	}
	out := make([]plugin.WorkspaceVolume, 0, len(claims.Items))
	for _, c := range claims.Items {
		size := c.Spec.Resources.Requests[corev1.ResourceStorage]
		if got, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
			size = got
		}
		d := map[string]string{"server": rc.Host, "namespace": ns, "phase": string(c.Status.Phase), "size": size.String()}
		if c.Spec.StorageClassName != nil {
			d["storage_class"] = *c.Spec.StorageClassName
		}
		out = append(out, plugin.WorkspaceVolume{Name: c.Name, Mode: Mode, Sandbox: attached[c.Name], Created: c.CreationTimestamp.Time, Details: d})
	}
	return out, nil
}

var _ plugin.VolumeKeeper = (*Provider)(nil)
