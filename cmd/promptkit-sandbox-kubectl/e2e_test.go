package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// TestHookRunThroughDiscoveredPlugin is what a user does: build the host
// CLI and this plugin, drop the plugin in a directory, and run a filter
// hook through `promptkit-sandbox hook run` with kubectl_exec sandboxes
// (both transports) naming the pod as ${POD_NAME}, against a pod of the
// real cluster (kubecluster) whose hooks container has the hooks image.
func TestHookRunThroughDiscoveredPlugin(t *testing.T) {
	k := kubecluster.Shared(t)
	ns := k.Namespace(t)
	image := k.Image(t, dockertest.Hooks)
	grace := int64(1)
	ctr := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: image, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "600"}}
	}
	k.RunPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-7d9f-x2", Namespace: ns, Labels: map[string]string{"app": "promptkit-agent"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{ctr("agent"), ctr("hooks")},
		},
	})

	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.4.0")
	copyKubeconfig(t, k.KubeconfigIn(t, ns), dir)
	cfg := filepath.Join(dir, "runtime.yaml")
	body := `spec:
  sandboxes:
    sidecar:
      mode: kubectl_exec
      version: "~> 0.4.0"
      pod: ${POD_NAME}
      container: hooks
      kubeconfig: ./kubeconfig
    sidecar-cli:
      mode: kubectl_exec
      pod: ${POD_NAME}
      container: hooks
      kubeconfig: ./kubeconfig
      transport: cli
  hooks:
    native_guard:
      command: /hooks/verdict
      hook: provider
      phases: [before_call]
      sandbox: sidecar
      timeout_ms: 30000
    cli_guard:
      command: /hooks/verdict
      hook: provider
      phases: [before_call]
      sandbox: sidecar-cli
      timeout_ms: 30000
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	plugintest.CheckVerdictHooks(t, cli, pluginDir, cfg, []string{"POD_NAME=agent-7d9f-x2"}, "native_guard", "cli_guard")

	// Without POD_NAME the config does not load, and says why.
	cmd := exec.Command(cli, "validate", "--plugin-dir", pluginDir, "--config", cfg)
	cmd.Env = withoutEnv(os.Environ(), "POD_NAME")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "POD_NAME") {
		t.Errorf("validate without POD_NAME: %v\n%s", err, out)
	}
}

func withoutEnv(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// copyKubeconfig puts the kubeconfig at src into dir as "kubeconfig",
// where a runtime config beside it names it ./kubeconfig.
func copyKubeconfig(t *testing.T, src, dir string) {
	t.Helper()
	kc, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600); err != nil {
		t.Fatal(err)
	}
}

// buildCLIAndPlugin builds the host CLI into dir and this plugin, at
// version, into dir/plugins, as make build lays them out.
func buildCLIAndPlugin(t *testing.T, dir, version string) (cli, pluginDir string) {
	t.Helper()
	return plugintest.BuildCLIAndPlugin(t, dir, "../promptkit-sandbox", "kubectl", version)
}
