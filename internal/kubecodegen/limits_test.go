package kubecodegen

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestMemoryHogOnTheRealCluster: the agent's memory hog is killed by
// the sandbox's memory limit (the container's cgroup), not sandboxd,
// which answers afterwards and keeps its Pod (no restart). (A fork bomb
// is not tried here: the cluster has no per-Pod pids limit, see
// docs/kubernetes.md, and it would take the node's pids.)
func TestMemoryHogOnTheRealCluster(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img := imageOnNode(ctx, t, k)
	ns := k.Namespace(t)
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{
		"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(t, ns), "memory": "256Mi", "cpus": "500m",
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	// GNU tail keeps a stream without newlines whole: 600 MB of it
	// against 256 MiB.
	text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": `head -c 600000000 /dev/zero | tail >/dev/null`, "timeout": 60000})
	t.Logf("the memory hog's call: %.300q", text)
	if !strings.Contains(text, "Killed") || !strings.HasSuffix(strings.TrimSpace(text), "Exit code: 137") {
		t.Errorf("the memory hog's call: %q, want it killed (SIGKILL, 137)", text)
	}
	if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
		t.Fatalf("after the memory hog: %q", out)
	}
	pod, err := k.Client.CoreV1().Pods(ns).Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.RestartCount != 0 {
			t.Errorf("container %s restarted %d times: sandboxd was killed", c.Name, c.RestartCount)
		}
	}
}
