package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/hooks"
)

// TestPluginSandboxEnvIsScrubbed: the env a plugin's sandbox sets in
// every process (test_env's, as docker_run's) reaches the hooks runtime
// through the plugin protocol, and its values are redacted from what the
// runtime quotes of a hook, though the runtime never reads the sandbox's
// configuration.
func TestPluginSandboxEnvIsScrubbed(t *testing.T) {
	t.Setenv("PK_PLUGIN_BOX_KEY", "forwarded-by-the-plugin")
	dir := t.TempDir()
	pdir := filepath.Join(dir, "plugins")
	install(t, testPlugin, pdir, "promptkit-sandbox-test_v1.0.0")
	cfg := filepath.Join(dir, "runtime.yaml")
	doc := `spec:
  sandboxes:
    box:
      mode: test_env
      env: [PK_PLUGIN_BOX_KEY, PK_BOX_LITERAL=box-literal-value]
  hooks:
    h:
      command: sh
      args: [-c, 'echo "$PK_PLUGIN_BOX_KEY $PK_BOX_LITERAL" >&2; exit 1']
      hook: provider
      phases: [before_call]
      sandbox: box
`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := hooks.Load(cfg, hooks.Options{Plugins: func(string, []string) (hooks.Plugins, error) {
		return New(Options{Dirs: []string{pdir}, Env: emptyEnv(t), CacheDir: t.TempDir()})
	}})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	d := call(t, rt, context.Background(), "h", false)
	want := `hook "h" failed: process exited with code 1 (stderr: [REDACTED:secret:PK_PLUGIN_BOX_KEY] [REDACTED:secret:PK_BOX_LITERAL])`
	if d.Reason != want {
		t.Errorf("reason %q, want %q", d.Reason, want)
	}
}
