package kubecodegen

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestDeadPodOnTheRealCluster: a sandbox whose Pod ends by itself is
// listed dead with the cluster's reason. One on a claim is evicted (its
// Pod's status set Failed, as the kubelet's eviction sets it): List
// says so, and a Pause and Resume give it a new Pod with the same files,
// listed running again. One on an emptyDir has its Pod deleted by
// someone else: List says so, and its Release leaves nothing.
func TestDeadPodOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	pods := s.k.Client.CoreV1().Pods(s.ns)

	onClaim, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg, WorkspaceVolume: "evicted"})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, onClaim.Endpoint, onClaim.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "before the eviction\n"})
	if got := stateOf(t, p, onClaim.ID); got != provision.StateRunning {
		t.Fatalf("state before the eviction: %q", got)
	}
	pod, err := pods.Get(ctx, onClaim.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const evicted = "The node was low on resource: ephemeral-storage."
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", evicted
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := stateOf(t, p, onClaim.ID), provision.StateDead+"the Pod ended (phase Failed): "+evicted; got != want {
		t.Errorf("state once evicted: %q, want %q", got, want)
	}
	if err := p.Pause(ctx, onClaim.ID); err != nil {
		t.Fatalf("pausing the evicted sandbox: %v", err)
	}
	if got := stateOf(t, p, onClaim.ID); got != provision.StatePaused {
		t.Errorf("state once paused: %q", got)
	}
	if err := p.Resume(ctx, onClaim.ID); err != nil {
		t.Fatalf("resuming the evicted sandbox: %v", err)
	}
	if got := stateOf(t, p, onClaim.ID); got != provision.StateRunning {
		t.Errorf("state once resumed: %q", got)
	}
	cs = mcptest.Connect(t, onClaim.Endpoint, onClaim.Token)
	if got := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "cat kept.txt"}); strings.TrimSpace(got) != "before the eviction" {
		t.Errorf("kept.txt in the new Pod: %q", got)
	}

	cfg := map[string]any{}
	for k, v := range s.cfg {
		if k != "storage_class" {
			cfg[k] = v
		}
	}
	onEmptyDir, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, onEmptyDir.Details["pod"], metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, p, onEmptyDir.ID); got != provision.StateDead+"the Pod was deleted" && got != provision.StateDead+"the Pod is being deleted" {
		t.Errorf("state once its Pod was deleted: %q", got)
	}
	if err := p.Release(ctx, onEmptyDir.ID, plugin.ReleaseOptions{}); err != nil {
		t.Errorf("releasing the sandbox whose Pod was deleted: %v", err)
	}
	if left := objectsOf(t, s.k, s.ns, onEmptyDir.ID); len(left) != 0 {
		t.Errorf("left after the release: %v", left)
	}
}

// stateOf is the state p's List gives the sandbox id.
func stateOf(t *testing.T, p *Provider, id string) string {
	t.Helper()
	list, err := p.List(context.Background(), plugin.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		if info.ID == id {
			return info.Details[provision.State]
		}
	}
	t.Fatalf("%s is not listed", id)
	return ""
}
