package kubecodegen

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// volumeSetup is a namespace with the provider's RBAC and local volumes
// of a class of its own (the test cluster has no provisioner), and the
// configuration of a small sandbox on them, checked by p as the host
// checks an entry.
type volumeSetup struct {
	k    *kubecluster.Cluster
	ns   string
	cfg  map[string]any
	vols []kubecluster.LocalVolume
}

func newVolumeSetup(ctx context.Context, t *testing.T, p *Provider, nvols int) volumeSetup {
	t.Helper()
	k := kubecluster.Shared(t)
	img := imageOnNode(ctx, t, k)
	class, vols := k.LocalVolumes(t, nvols, "1Gi") // before the namespace: see LocalVolumes
	ns := k.Namespace(t)
	cfg := map[string]any{
		"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(t, ns), "memory": "512Mi", "cpus": "500m",
		"workspace_size": "1Gi", "storage_class": class,
	}
	if err := p.Check("code", cfg); err != nil {
		t.Fatal(err)
	}
	return volumeSetup{k: k, ns: ns, cfg: cfg, vols: vols}
}

// claimOf is the claim name in the namespace, nil when there is none.
func (s volumeSetup) claimOf(t *testing.T, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	c, err := s.k.Client.CoreV1().PersistentVolumeClaims(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return c
}

// volumeOn is the sandbox p's Volumes says name is attached to; found
// is false when it does not list name.
func volumeOn(t *testing.T, p *Provider, name string) (id string, found bool) {
	t.Helper()
	vols, err := p.Volumes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vols {
		if v.Name == name {
			if v.Mode != Mode || v.Created.IsZero() || v.Details["namespace"] == "" || v.Details["size"] != "1Gi" {
				t.Errorf("volume listed as %+v", v)
			}
			return v.Sandbox, true
		}
	}
	return "", false
}

// TestWorkspaceVolumeOnTheRealCluster is a workspace volume's life on
// the real cluster, as the service account deploy/kubernetes/codegen
// makes: a claim created on first use, written by the agent (UID 65532,
// through the Pod's fsGroup) and listed with its sandbox; refused to a
// second sandbox of this plugin and of another while attached; kept by
// a Release (nothing else of the sandbox is left) so the next sandbox
// naming it finds the agent's files; deleted by a Release with Purge. A
// claim the provider did not make is never mounted.
func TestWorkspaceVolumeOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	spec := plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg, WorkspaceVolume: "kept"}

	first, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if first.WorkspaceVolume != "kept" || first.Workspace != "" || first.Details["workspace_volume"] != "kept" {
		t.Errorf("provisioned %+v", first)
	}
	c := s.claimOf(t, "kept")
	if c == nil || len(c.OwnerReferences) != 0 || c.Labels[LabelKind] != KindWorkspace || c.Status.Phase != corev1.ClaimBound {
		t.Fatalf("the claim: %+v", c)
	}
	cs := mcptest.Connect(t, first.Endpoint, first.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "notes/kept.txt", "content": "from the first sandbox\n"})
	if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "id -u; cat notes/kept.txt"}); strings.TrimSpace(out) != "65532\nfrom the first sandbox" {
		t.Errorf("Bash in the first sandbox: %q", out)
	}
	// On the node's disk, where the claim is bound.
	if data, err := os.ReadFile(filepath.Join(s.vols[0].Dir, "notes", "kept.txt")); err != nil || string(data) != "from the first sandbox\n" {
		t.Errorf("the file on the volume's disk: %q, %v", data, err)
	}
	if id, found := volumeOn(t, p, "kept"); !found || id != first.ID {
		t.Errorf("Volumes: kept attached to %q (listed %v), want %s", id, found, first.ID)
	}

	// Attached: refused to another sandbox of this plugin, and of
	// another plugin (which sees the first one's Lease); neither leaves
	// anything.
	if _, err := p.Provision(ctx, spec); !errors.Is(err, ErrVolumeInUse) || !strings.Contains(err.Error(), first.ID) {
		t.Errorf("a second sandbox on kept: %v, want ErrVolumeInUse naming %s", err, first.ID)
	}
	other := NewProvider(nil)
	t.Cleanup(func() { _ = other.Close() })
	if _, err := other.Provision(ctx, spec); !errors.Is(err, ErrVolumeInUse) || !strings.Contains(err.Error(), first.ID) {
		t.Errorf("another plugin's sandbox on kept: %v, want ErrVolumeInUse naming %s", err, first.ID)
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) != 5 {
		t.Errorf("objects after the refusals: %v, want the first sandbox's five", left)
	}

	// down, then up on the same volume: the files are there.
	if err := p.Release(ctx, first.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if left := objectsOf(t, s.k, s.ns, first.ID); len(left) > 0 {
		t.Errorf("left after Release: %v", left)
	}
	if s.claimOf(t, "kept") == nil {
		t.Fatal("Release deleted the workspace volume's claim")
	}
	if id, found := volumeOn(t, p, "kept"); !found || id != "" {
		t.Errorf("Volumes after Release: kept attached to %q (listed %v), want listed and unattached", id, found)
	}
	// A place out of reach (its kubeconfig gone) hides none of the
	// reachable one's volumes: they come with the error.
	gone := place{kubeconfig: filepath.Join(t.TempDir(), "gone.yaml"), namespace: "elsewhere"}
	p.mu.Lock()
	p.places[gone] = true
	p.mu.Unlock()
	vols, err := p.Volumes(ctx)
	p.mu.Lock()
	delete(p.places, gone)
	p.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), gone.kubeconfig) || !slices.ContainsFunc(vols, func(v plugin.WorkspaceVolume) bool { return v.Name == "kept" }) {
		t.Errorf("Volumes with a place out of reach: %+v, %v; want kept listed and an error naming %s", vols, err, gone.kubeconfig)
	}
	second, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	cs = mcptest.Connect(t, second.Endpoint, second.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "notes/kept.txt"}); !strings.Contains(out, "from the first sandbox") {
		t.Errorf("Read in the second sandbox: %q", out)
	}

	// down --purge: the claim goes too.
	if err := p.Release(ctx, second.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if c := s.claimOf(t, "kept"); c != nil {
		t.Errorf("the claim after a Release with Purge: %+v", c)
	}
	if _, found := volumeOn(t, p, "kept"); found {
		t.Error("Volumes lists kept after its purge")
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) > 0 {
		t.Errorf("left after the purge: %v", left)
	}

	// A claim of that name the provider did not make is refused, and
	// left alone.
	theirs := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: s.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := s.k.Client.CoreV1().PersistentVolumeClaims(s.ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec.WorkspaceVolume = "theirs"
	if _, err := p.Provision(ctx, spec); !errors.Is(err, ErrVolumeNotOurs) {
		t.Errorf("a claim the provider did not make: %v, want ErrVolumeNotOurs", err)
	}
	if s.claimOf(t, "theirs") == nil {
		t.Error("the refused claim was deleted")
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) > 0 {
		t.Errorf("left after the refusal: %v", left)
	}
}
