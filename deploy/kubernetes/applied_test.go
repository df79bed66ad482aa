package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
)

// The images the manifests name, which the test replaces with its own.
const (
	manifestAgentImage = "example.com/promptkit-agent:1.0.0"
	manifestHookImage  = "promptkit-examples/pii-hook:0.1.0"
)

// TestAppliedForReal applies the manifests, as they are but for the
// namespace and the agent's image, to the real cluster: the service
// account may do exactly what the plugin needs, the agent and its hooks
// sidecar come up, and a hook run in the agent container goes through
// kubectl_exec (in-cluster configuration, the pod's own service account)
// into the sidecar and back.
func TestAppliedForReal(t *testing.T) {
	k := kubecluster.Shared(t)
	ns := k.Namespace(t)
	agentImage := k.Image(t, dockertest.Agent)
	hookImage := exampleHookImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := k.ImportImage(ctx, hookImage); err != nil {
		t.Fatal(err)
	}

	// The agent image has no entrypoint of its own: it idles, as the
	// sidecar does, and the test runs hooks in it with kubectl exec.
	idle := `command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]`
	dir := t.TempDir()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "namespace: promptkit\n", "namespace: "+ns+"\n")
		text = replaceLine(t, text, "image: "+manifestAgentImage, "image: "+agentImage+"\n          "+idle)
		text = strings.ReplaceAll(text, "image: "+manifestHookImage, "image: "+hookImage)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kubectl(t, k, "", "apply", "--validate=strict", "-f", dir)

	t.Run("rbac", func(t *testing.T) {
		as := "system:serviceaccount:" + ns + ":promptkit-agent"
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"create", "pods", "--subresource=exec"}, "yes"},
			{[]string{"get", "pods"}, "yes"},
			{[]string{"list", "pods"}, "yes"},
			{[]string{"create", "pods"}, "no"},
			{[]string{"delete", "pods"}, "no"},
			{[]string{"patch", "pods"}, "no"},
			{[]string{"watch", "pods"}, "no"},
			{[]string{"create", "pods", "--subresource=attach"}, "no"},
			{[]string{"create", "pods", "--subresource=portforward"}, "no"},
			{[]string{"get", "secrets"}, "no"},
			{[]string{"get", "configmaps"}, "no"},
			{[]string{"list", "deployments.apps"}, "no"},
			{[]string{"create", "pods", "--subresource=exec", "-n", "default"}, "no"},
			{[]string{"get", "pods", "-n", "kube-system"}, "no"},
			{[]string{"get", "nodes"}, "no"},
		} {
			args := append([]string{"auth", "can-i", "--as", as, "-n", ns}, tc.args...)
			out, _, _ := kubectlResult(k, "", args...) // can-i exits 1 for "no"
			if got := strings.TrimSpace(out); got != tc.want {
				t.Errorf("kubectl auth can-i %s: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
			}
		}
	})

	pod := runningAgentPod(t, k, ns)
	payloads := filepath.Join("..", "..", "examples", "payloads")
	for _, tc := range []struct {
		phase, payload string
		code           int
		allow          bool
	}{
		{"before_call", "provider_before_call_clean.json", 0, true},
		{"before_call", "provider_before_call_ssn.json", 1, false},
		{"after_call", "provider_after_call.json", 0, true},
		{"after_call", "provider_after_call_ssn.json", 1, false},
	} {
		input, err := os.ReadFile(filepath.Join(payloads, tc.payload))
		if err != nil {
			t.Fatal(err)
		}
		out, stderr, code := kubectlResult(k, string(input), "-n", ns, "exec", "-i", pod, "-c", "agent", "--",
			dockertest.AgentCLI, "hook", "run", "--plugin-dir", dockertest.AgentPluginDir,
			"--config", "/etc/promptkit/runtime.yaml", "--hook", "pii", "--phase", tc.phase)
		var verdict struct {
			Allow  bool   `json:"allow"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(lastLine(out)), &verdict); err != nil || code != tc.code || verdict.Allow != tc.allow {
			t.Errorf("%s %s: exit %d (want %d), allow %v (want %v):\n%s\nstderr: %s", tc.phase, tc.payload, code, tc.code, verdict.Allow, tc.allow, out, stderr)
		}
	}
}

// runningAgentPod waits for the Deployment's pod to be Running with both
// containers ready, and returns its name.
func runningAgentPod(t *testing.T, k *kubecluster.Cluster, ns string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		pods, err := k.Client.CoreV1().Pods(ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=promptkit-agent"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			ready := len(p.Status.ContainerStatuses) == 2
			for _, cs := range p.Status.ContainerStatuses {
				ready = ready && cs.Ready
			}
			if p.DeletionTimestamp == nil && ready {
				return p.Name
			}
			last = p.Name + ": " + string(p.Status.Phase)
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Waiting != nil {
					last += ", " + cs.Name + " waiting: " + cs.State.Waiting.Reason + " " + cs.State.Waiting.Message
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the agent's pod did not come up: %s", last)
	return ""
}

// exampleHookImage is the hook image the manifests name, built by
// examples/docker/build-image.sh unless the engine has it.
func exampleHookImage(t *testing.T) string {
	t.Helper()
	dockertest.Require(t)
	if err := exec.Command("docker", "image", "inspect", manifestHookImage).Run(); err == nil {
		return manifestHookImage
	}
	out, err := exec.Command(filepath.Join("..", "..", "examples", "docker", "build-image.sh"), manifestHookImage).CombinedOutput()
	if err != nil {
		t.Fatalf("building %s: %v\n%s", manifestHookImage, err, out)
	}
	return manifestHookImage
}

// replaceLine replaces the line that starts (after its indent) with
// prefix by repl, kept at the same indent; the line must be there.
func replaceLine(t *testing.T, text, prefix, repl string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if trimmed := strings.TrimLeft(l, " "); strings.HasPrefix(trimmed, prefix) {
			lines[i] = l[:len(l)-len(trimmed)] + repl
			return strings.Join(lines, "\n")
		}
	}
	if strings.Contains(text, "kind: Deployment") {
		t.Fatalf("no line %q in the Deployment", prefix)
	}
	return text
}

// kubectl runs the cluster's kubectl as its administrator and fails the
// test if it fails.
func kubectl(t *testing.T, k *kubecluster.Cluster, stdin string, args ...string) string {
	t.Helper()
	out, stderr, code := kubectlResult(k, stdin, args...)
	if code != 0 {
		t.Fatalf("kubectl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// kubectlResult runs the cluster's kubectl and returns its stdout, its
// stderr and its exit code.
func kubectlResult(k *kubecluster.Cluster, stdin string, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.Kubectl, append([]string{"--kubeconfig", k.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
