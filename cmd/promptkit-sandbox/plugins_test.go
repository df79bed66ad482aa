package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

var (
	testPluginOnce  sync.Once
	testPluginDir   string // removed by TestMain
	testPluginBuild string
	testPluginErr   error
)

func TestMain(m *testing.M) {
	// The commands run in-process contain their calls by starts of this
	// binary, as the CLI's main does.
	supervisor.Init()
	code := m.Run()
	if testPluginDir != "" {
		os.RemoveAll(testPluginDir)
	}
	removeBuilds()
	os.Exit(code)
}

// testPluginBinary builds the host's test plugin once per test binary.
// Under -short it skips the test instead.
func testPluginBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the test plugin binary (make test runs it)")
	}
	testPluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "promptkit-cli-plugin-")
		if err != nil {
			testPluginErr = err
			return
		}
		testPluginDir = dir
		testPluginBuild = filepath.Join(dir, "testplugin")
		cmd := exec.Command("go", "build", "-o", testPluginBuild, "../../plugin/internal/testplugin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			testPluginErr = err
			testPluginBuild = string(out)
		}
	})
	if testPluginErr != nil {
		t.Fatalf("build test plugin: %v\n%s", testPluginErr, testPluginBuild)
	}
	return testPluginBuild
}

// pluginSetup installs the test plugin as "test" v1.0.0 into a fresh
// plugin dir and writes a config using its test_direct mode.
func pluginSetup(t *testing.T) (pluginDir, cfg, pluginPath string) {
	t.Helper()
	pluginDir = filepath.Join(t.TempDir(), "plugins")
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testPluginBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	pluginPath = filepath.Join(pluginDir, "promptkit-sandbox-test_v1.0.0")
	if err := os.WriteFile(pluginPath, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	hook := filepath.Join(cfgDir, "allow.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"allow\": false, \"reason\": \"from the plugin sandbox\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(cfgDir, "runtime.yaml")
	body := `spec:
  sandboxes:
    box:
      mode: test_direct
      version: "~> 1.0"
      timeout: 5s
  hooks:
    guard:
      command: ` + hook + `
      hook: tool
      phases: [before_execution]
      sandbox: box
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return pluginDir, cfg, pluginPath
}

func TestPluginSandboxInEveryCommand(t *testing.T) {
	dir, cfg, path := pluginSetup(t)

	code, out, stderr := cli(t, "", "validate", "--plugin-dir", dir, "--config", cfg)
	if code != 0 || !strings.Contains(out, "sandbox box: mode test_direct, plugin test 1.0.0 ("+path+")\n") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, stderr)
	}

	code, out, stderr = cli(t, "in", "spawn", "--plugin-dir", dir, "--config", cfg, "--sandbox", "box", "--", "sh", "-c", "cat; echo ' out'; exit 3")
	if code != 3 || out != "in out\n" {
		t.Fatalf("spawn: exit %d out %q stderr %q", code, out, stderr)
	}

	code, out, stderr = cli(t, `{"request":{"Name":"x","Args":null,"CallID":"c"}}`, "hook", "run", "--plugin-dir", dir, "--config", cfg, "--hook", "guard", "--phase", "before_execution")
	if code != exitDenied || strings.TrimSpace(out) != `{"allow":false,"reason":"from the plugin sandbox","enforced":false,"metadata":null}` {
		t.Fatalf("hook run: exit %d out %q stderr %q", code, out, stderr)
	}

	// PROMPTKIT_PLUGIN_PATH is the default search path's first entry.
	t.Setenv("PROMPTKIT_PLUGIN_PATH", dir)
	code, _, stderr = cli(t, "", "validate", "--config", cfg)
	if code != 0 {
		t.Fatalf("validate via PROMPTKIT_PLUGIN_PATH: exit %d %s", code, stderr)
	}
	// --plugin-dir replaces it.
	code, _, stderr = cli(t, "", "validate", "--plugin-dir", t.TempDir(), "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, `unknown sandbox mode "test_direct" (known modes: direct); plugin directories searched: `) {
		t.Fatalf("validate with an empty --plugin-dir: exit %d %s", code, stderr)
	}
}

func TestPluginsList(t *testing.T) {
	dir, _, path := pluginSetup(t)
	bad := filepath.Join(dir, "promptkit-sandbox-loose_v1.0.0")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bad, 0o777); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "", "plugins", "list", "--plugin-dir", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list pluginList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(list.Dirs) != 1 || list.Dirs[0] != dir || len(list.Plugins) != 2 {
		t.Fatalf("list: %+v", list)
	}
	byName := map[string]pluginRow{}
	for _, p := range list.Plugins {
		byName[p.Name] = p
	}
	good := byName["test"]
	if good.Version != "1.0.0" || good.Path != path || len(good.SHA256) != 64 || good.Refused != "" ||
		strings.Join(good.Modes, ",") != "shared_echo,test_crash,test_deaf,test_direct,test_env,test_flaky,test_flood,test_hang,test_late,test_noop,test_stuck" {
		t.Fatalf("test plugin row: %+v", good)
	}
	if loose := byName["loose"]; !strings.Contains(loose.Refused, "writable") {
		t.Fatalf("loose plugin row: %+v", loose)
	}

	code, out, _ = cli(t, "", "plugins", "list", "--plugin-dir", dir)
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "refused: ") || !strings.Contains(out, good.SHA256[:12]) {
		t.Fatalf("table: %d\n%s", code, out)
	}
}

func TestPluginsLock(t *testing.T) {
	dir, cfg, path := pluginSetup(t)
	code, out, stderr := cli(t, "", "plugins", "lock", "--plugin-dir", dir, "--config", cfg)
	lockPath := filepath.Join(filepath.Dir(cfg), "promptkit-sandbox.lock")
	if code != 0 || !strings.Contains(out, "locked test 1.0.0 ") || !strings.Contains(out, "wrote "+lockPath) {
		t.Fatalf("lock: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := cli(t, "", "validate", "--plugin-dir", dir, "--config", cfg); code != 0 {
		t.Fatalf("validate with a matching lock: %d %s", code, stderr)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte("x"))
	f.Close()
	code, _, stderr = cli(t, "", "validate", "--plugin-dir", dir, "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "does not match the lock file") {
		t.Fatalf("validate with a tampered plugin: exit %d %s", code, stderr)
	}
	// Re-locking accepts the new binary on purpose.
	if code, _, stderr := cli(t, "", "plugins", "lock", "--plugin-dir", dir, "--config", cfg); code != 0 {
		t.Fatalf("re-lock: %d %s", code, stderr)
	}
	if code, _, stderr := cli(t, "", "validate", "--plugin-dir", dir, "--config", cfg); code != 0 {
		t.Fatalf("validate after re-lock: %d %s", code, stderr)
	}
}
