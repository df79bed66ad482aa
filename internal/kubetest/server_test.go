package kubetest

import (
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// kubectlPath finds the real kubectl. Without one the test is skipped,
// unless CI is set: there the kubectl tests must run. Under -short it is
// always skipped.
func kubectlPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping in -short mode: needs the kubectl binary (make test runs it)")
	}
	path, err := exec.LookPath("kubectl")
	if err != nil {
		ci.Skip(t, "kubectl is not installed (make test installs one)")
	}
	return path
}

// kubectl runs the real kubectl against the server.
func kubectl(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(kubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), strings.TrimSpace(stderr.String()), err
}

func TestKubectlGetAndListPods(t *testing.T) {
	kubectlPath(t) // skips first, with the reason that applies here
	s := Start(t)
	s.AddPod("promptkit", "agent-1", map[string]string{"app": "agent"}, map[string]string{"agent": "c1", "hooks": "c2"})
	s.AddPod("promptkit", "agent-2", map[string]string{"app": "agent"}, map[string]string{"hooks": "c3"})
	s.AddPod("other", "agent-3", map[string]string{"app": "agent"}, map[string]string{"hooks": "c4"})
	kc := s.Kubeconfig(t, t.TempDir(), "promptkit")

	out, stderr, err := kubectl(t, kc, "get", "pod", "agent-1", "-o", "jsonpath={.metadata.name} {.status.phase} {.spec.containers[*].name}")
	if err != nil || out != "agent-1 Running agent hooks" {
		t.Fatalf("get pod: %v: %q (stderr %q)", err, out, stderr)
	}
	out, stderr, err = kubectl(t, kc, "get", "pods", "-l", "app=agent", "-o", "name")
	if err != nil || out != "pod/agent-1\npod/agent-2" {
		t.Fatalf("list by selector: %v: %q (stderr %q)", err, out, stderr)
	}
	_, stderr, err = kubectl(t, kc, "get", "pod", "nope")
	if err == nil || !strings.Contains(stderr, `pods "nope" not found`) {
		t.Fatalf("missing pod: %v, stderr %q", err, stderr)
	}
	s.SetPhase("promptkit", "agent-2", corev1.PodPending)
	out, _, err = kubectl(t, kc, "get", "pod", "agent-2", "-o", "jsonpath={.status.phase}")
	if err != nil || out != "Pending" {
		t.Fatalf("phase: %v %q", err, out)
	}

	restricted := s.RestrictedKubeconfig(t, t.TempDir(), "promptkit", "get pods")
	if _, stderr, err := kubectl(t, restricted, "get", "pods"); err == nil || !strings.Contains(stderr, "forbidden") {
		t.Fatalf("list without the list verb: %v, stderr %q", err, stderr)
	}
	if out, _, err := kubectl(t, restricted, "get", "pod", "agent-1", "-o", "name"); err != nil || out != "pod/agent-1" {
		t.Fatalf("get with the get verb: %v %q", err, out)
	}
}
