package kubecodegen

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestWorkspaceVolumeObjects: a workspace volume is a claim of
// workspace_size in storage_class (none: the cluster's default), owned
// by nothing (so it outlives the sandbox's Secret), labelled as ours;
// the Pod mounts it at the workspace, and the sandbox's objects (its
// Lease among them) name it.
func TestWorkspaceVolumeObjects(t *testing.T) {
	set, err := parseConfig(map[string]any{"image": "img:1", "workspace_size": "3Gi", "storage_class": "fast"})
	if err != nil {
		t.Fatal(err)
	}
	set.volume = "kept"
	o := objects{id: "cg-1", name: "sandboxd-cg-1", ns: "ns", sandboxName: "code", set: set}
	c := o.claim()
	if c.Name != "kept" || c.Namespace != "ns" || len(c.OwnerReferences) != 0 || c.Labels[LabelKind] != KindWorkspace ||
		c.Labels[LabelManagedBy] != managedBy || *c.Spec.StorageClassName != "fast" ||
		c.Spec.Resources.Requests.Storage().String() != "3Gi" || c.Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("claim: %+v", c)
	}
	if err := checkOurs(c); err != nil {
		t.Errorf("the provider refuses its own claim: %v", err)
	}
	owner := o.secret("tok", nil)
	if l := o.lease(owner, newLeases(), c.CreationTimestamp.Time); l.Labels[LabelVolume] != "kept" {
		t.Errorf("the Lease does not name the volume: %v", l.Labels)
	}
	ws := o.pod(owner).Spec.Volumes[1]
	if ws.Name != "workspace" || ws.PersistentVolumeClaim == nil || ws.PersistentVolumeClaim.ClaimName != "kept" {
		t.Errorf("the Pod's workspace: %+v", ws)
	}
	o.set.storageClass = ""
	if c := o.claim(); c.Spec.StorageClassName != nil {
		t.Errorf("no storage_class: class %q, want the cluster's default (none named)", *c.Spec.StorageClassName)
	}
	c.Labels = map[string]string{LabelKind: KindWorkspace}
	if err := checkOurs(c); err == nil || !strings.Contains(err.Error(), "not made by promptkit-sandbox") {
		t.Errorf("a claim without our labels: %v", err)
	}
}

// TestWorkspaceVolumeRefusals: kubectl_codegen is a plugin.VolumeKeeper
// (its plugin server lets workspace volumes through), and a volume it
// cannot make is refused before anything is asked of the cluster: a
// name that is no claim name, one beside workspace_pvc, a host
// workspace.
func TestWorkspaceVolumeRefusals(t *testing.T) {
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	if _, ok := any(p).(plugin.VolumeKeeper); !ok {
		t.Fatal("kubectl_codegen is no VolumeKeeper")
	}
	if _, ok := any(p).(plugin.Pauser); !ok {
		t.Fatal("kubectl_codegen is no Pauser")
	}
	// A kubeconfig that does not exist: reaching the cluster fails
	// differently.
	cfg := map[string]any{"image": "img:1", "kubeconfig": "/nonexistent/kubeconfig"}
	for _, tc := range []struct {
		spec plugin.ProvisionSpec
		says string
	}{
		{plugin.ProvisionSpec{WorkspaceVolume: "Not_A_Name"}, `workspace volume "Not_A_Name"`},
		{plugin.ProvisionSpec{WorkspaceVolume: strings.Repeat("a", 64)}, "must be no more than 63"},
		{plugin.ProvisionSpec{WorkspaceVolume: "kept", Config: map[string]any{"workspace_pvc": "claim"}}, "exclude each other"},
		{plugin.ProvisionSpec{Workspace: "/srv/x"}, "not a host directory"},
	} {
		spec := tc.spec
		spec.Name, spec.Mode = "code", Mode
		if spec.Config == nil {
			spec.Config = cfg
		}
		if _, err := p.Provision(context.Background(), spec); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v, want an error saying %q", spec, err, tc.says)
		}
	}
}
