package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubetest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// TestHookRunThroughDiscoveredPlugin is what a user does: build the host
// CLI and this plugin, drop the plugin in a directory, and run a filter
// hook through `promptkit-sandbox hook run` with kubectl_exec sandboxes
// (both transports) naming the pod as ${POD_NAME}, against a loopback API
// server whose pod is a real container.
func TestHookRunThroughDiscoveredPlugin(t *testing.T) {
	klog.SetLogger(logr.Discard())
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Hooks)
	sidecar := strings.TrimSpace(dockertest.Docker(t, "run", "-d", "--init", "--network", "none",
		"--label", dockertest.UniqueLabel(t), image, "sleep", "600"))
	srv := kubetest.Start(t)
	srv.AddPod("promptkit", "agent-7d9f-x2", map[string]string{"app": "promptkit-agent"},
		map[string]string{"agent": sidecar, "hooks": sidecar})

	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.4.0")
	kc := srv.Kubeconfig(t, dir, "promptkit")
	if err := os.Rename(kc, filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
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

// buildCLIAndPlugin builds the host CLI into dir and this plugin, at
// version, into dir/plugins, as make build lays them out.
func buildCLIAndPlugin(t *testing.T, dir, version string) (cli, pluginDir string) {
	t.Helper()
	return plugintest.BuildCLIAndPlugin(t, dir, "../promptkit-sandbox", "kubectl", version)
}
