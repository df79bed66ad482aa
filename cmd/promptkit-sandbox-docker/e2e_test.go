package main

import (
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
	plugintest.CheckVerdictHooks(t, cli, pluginDir, cfg, nil, "run_guard", "exec_guard")
}

// buildCLIAndPlugin builds the host CLI into dir and this plugin, at
// version, into dir/plugins, as make build lays them out.
func buildCLIAndPlugin(t *testing.T, dir, version string) (cli, pluginDir string) {
	t.Helper()
	return plugintest.BuildCLIAndPlugin(t, dir, "../promptkit-sandbox", "docker", version)
}

// TestSpawnExitCodesWhenTheSandboxCannotOpen: a config the loader
// accepts whose sandbox cannot open (the engine is unreachable, the image
// is missing) exits 125, with the cause, as a sandbox that could not run
// the command does; a config the plugin rejects exits 2.
func TestSpawnExitCodesWhenTheSandboxCannotOpen(t *testing.T) {
	dockertest.Require(t)
	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.9.0")
	for _, tc := range []struct {
		name, sandbox, want string
		env                 []string
		code                int
	}{
		{"engine unreachable", "image: " + dockertest.Image(t, dockertest.Busybox), "unreachable",
			[]string{"DOCKER_HOST=unix://" + filepath.Join(dir, "no-engine.sock")}, 125},
		{"image missing", "image: promptkit-test/absent:never", "is not present locally", nil, 125},
		{"bad key", "image: x\n      colour: blue", `unknown key "colour"`, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "runtime.yaml")
			body := "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      " + tc.sandbox + "\n"
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(cli, "spawn", "--plugin-dir", pluginDir, "--config", cfg, "--sandbox", "box", "--", "true")
			cmd.Env = append(os.Environ(), tc.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if xe, ok := err.(*exec.ExitError); ok {
				code = xe.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d saying %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}
