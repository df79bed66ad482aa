package kubecodegen

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestMemoryHogOnTheRealCluster: the agent's memory hog is killed by
// the sandbox's memory limit (the container's cgroup), not sandboxd,
// which answers afterwards and keeps its Pod (no restart). (A fork bomb
// is not tried here: the cluster has no per-Pod pids limit, see
// docs/kubernetes.md, and it would take the node's pids.)
func TestMemoryHogOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := newClusterSetup(ctx, t, map[string]any{"memory": "256Mi"})
	k, ns, p := s.k, s.ns, s.p
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg})
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

// TestWorkspaceTmpfsOnTheRealCluster: with workspace_tmpfs the kubelet
// mounts the workspace as a tmpfs of that size: a command writing past
// it fails with "No space left on device" and the Pod goes on (not
// evicted, not restarted); the usage reports the limit.
func TestWorkspaceTmpfsOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := newClusterSetup(ctx, t, map[string]any{"workspace_tmpfs": "8Mi"})
	k, ns, p := s.k, s.ns, s.p
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg})
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != "tmpfs" {
		t.Errorf("Workspace %q, want tmpfs", got.Workspace)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": `df --output=fstype,size -B1 . | tail -1; head -c 20000000 /dev/zero > big; echo "status $?"`})
	t.Logf("writing 20 MB into 8 MiB: %q", text)
	if !strings.Contains(text, "tmpfs") || !strings.Contains(text, "No space left on device") || !strings.Contains(text, "status 1") {
		t.Errorf("writing 20 MB into 8 MiB: %q", text)
	}
	list, err := p.List(ctx, plugin.ListOptions{Usage: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %v %+v", err, list)
	}
	if d := list[0].Details; d[provision.UsageWorkspaceMax] != strconv.Itoa(8<<20) || d[provision.UsageWorkspace] == "" {
		t.Errorf("usage: workspace %q of %q, want some of 8 MiB", d[provision.UsageWorkspace], d[provision.UsageWorkspaceMax])
	}
	if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "rm big && echo alive"}); strings.TrimSpace(out) != "alive" {
		t.Fatalf("after the full workspace: %q", out)
	}
	pod, err := k.Client.CoreV1().Pods(ns).Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.RestartCount != 0 {
			t.Errorf("container %s restarted %d times", c.Name, c.RestartCount)
		}
	}
}

// TestPidsLimitOnTheRealCluster: with pids_limit each sandbox runs as a
// user of its own held to that many tasks: one starting 100 sleeps under
// 64 is refused some (bash says so) and answers after; another sandbox
// on the same node, with the same limit, starts its own meanwhile. (100
// sleeps, not a fork bomb: were the limit not to hold, a bomb would take
// the node's pids, and the CI machine with them.)
func TestPidsLimitOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := newClusterSetup(ctx, t, map[string]any{"pids_limit": 64})
	p, cfg := s.p, s.cfg
	crowded, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "crowded", Mode: Mode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "other", Mode: Mode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cs, ocs := mcptest.Connect(t, crowded.Endpoint, crowded.Token), mcptest.Connect(t, other.Endpoint, other.Token)
	if a, b := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "id -u"}), mcptest.CallText(t, ocs, "Bash", map[string]any{"command": "id -u"}); a == b || a == strconv.Itoa(codegenimage.UID) {
		t.Errorf("the sandboxes' users: %q and %q, want one of their own each", a, b)
	}
	done := make(chan string, 1)
	go func() {
		text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": `for i in $(seq 100); do sleep 20 & done 2>&1; echo started`, "timeout": 15000})
		done <- text
	}()
	time.Sleep(3 * time.Second)
	if out := mcptest.CallText(t, ocs, "Bash", map[string]any{"command": `for i in $(seq 20); do sleep 1 & done; wait; echo twenty`}); strings.TrimSpace(out) != "twenty" {
		t.Errorf("the other sandbox, meanwhile: %q", out)
	}
	if text := <-done; !strings.Contains(text, "Resource temporarily unavailable") {
		t.Errorf("100 sleeps under a limit of 64: %.400q", text)
	}
	if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
		t.Fatalf("after the limit was hit: %q", out)
	}
}

// clusterSetup is what a test of a sandbox on the real cluster starts
// from: the cluster, a namespace of the test's own, a provider closed
// after the test, and an entry's config for the image on the node
// (512Mi, half a core), extra's keys over it.
type clusterSetup struct {
	k   *kubecluster.Cluster
	ns  string
	p   *Provider
	cfg map[string]any
}

func newClusterSetup(ctx context.Context, t *testing.T, extra map[string]any) clusterSetup {
	t.Helper()
	k := kubecluster.Shared(t)
	img := imageOnNode(ctx, t, k)
	ns := k.Namespace(t)
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	cfg := map[string]any{"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(t, ns), "memory": "512Mi", "cpus": "500m"}
	maps.Copy(cfg, extra)
	return clusterSetup{k: k, ns: ns, p: p, cfg: cfg}
}
