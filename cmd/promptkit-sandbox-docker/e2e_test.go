package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// TestHookRunThroughDiscoveredPlugin is what a user does: build the host
// CLI and this plugin, drop the plugin in a directory, and run a filter
// hook through `promptkit-sandbox hook run` with a docker_run and a
// docker_exec sandbox.
func TestHookRunThroughDiscoveredPlugin(t *testing.T) {
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Hooks)
	label := dockertest.UniqueLabel(t)

	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.9.0")

	// A long-lived sidecar for docker_exec, gone when the test ends.
	sidecar := "pks-e2e-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	dockertest.Docker(t, "run", "-d", "--rm", "--network", "none", "--label", label, "--name", sidecar, image, "sleep", "600")

	cfg := filepath.Join(dir, "runtime.yaml")
	body := `spec:
  sandboxes:
    fresh:
      mode: docker_run
      version: "~> 0.9.0"
      image: ` + image + `
    sidecar:
      mode: docker_exec
      container: ` + sidecar + `
  hooks:
    run_guard:
      command: /hooks/verdict
      hook: provider
      phases: [before_call]
      sandbox: fresh
      timeout_ms: 30000
    exec_guard:
      command: /hooks/verdict
      hook: provider
      phases: [before_call]
      sandbox: sidecar
      timeout_ms: 30000
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	request := func(content string) string {
		return `{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[{"role":"user","timestamp":"2026-04-15T12:00:00Z","content":"` + content + `"}],"SystemPrompt":"","Round":1,"Metadata":null,"Replacement":""}}`
	}
	for _, hook := range []string{"run_guard", "exec_guard"} {
		for _, tc := range []struct {
			content string
			code    int
			out     string
		}{
			{"hello", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
			{"please deny-me", 1, `{"allow":false,"reason":"request contains deny-me","enforced":false,"metadata":null}`},
		} {
			cmd := exec.Command(cli, "hook", "run", "--plugin-dir", pluginDir, "--config", cfg, "--hook", hook, "--phase", "before_call")
			cmd.Stdin = strings.NewReader(request(tc.content))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || strings.TrimSpace(stdout.String()) != tc.out {
				t.Errorf("%s %q: exit %d (want %d)\n got %s\nwant %s\nstderr: %s", hook, tc.content, code, tc.code, stdout.String(), tc.out, stderr.String())
			}
		}
	}
}

// buildCLIAndPlugin builds the host CLI into dir and this plugin, at
// version, into dir/plugins, as make build lays them out.
func buildCLIAndPlugin(t *testing.T, dir, version string) (cli, pluginDir string) {
	t.Helper()
	return plugintest.BuildCLIAndPlugin(t, dir, "../promptkit-sandbox", "docker", version)
}
