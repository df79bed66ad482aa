package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/hooks"
)

// TestUnknownModeSaysWhyPluginFailed: when the only plugin that could
// serve a mode crashes at start or never completes its handshake, the
// config's error itself says so — the plugin, what went wrong, and what
// it wrote to stderr — not only a WARN line the log level may hide.
func TestUnknownModeSaysWhyPluginFailed(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		install    func(t *testing.T, dir string) string
		want       []string
	}{
		{
			name: "handshake never completes", mode: "stall_run",
			install: func(t *testing.T, dir string) string {
				return install(t, testPlugin, dir, "promptkit-sandbox-stall_v1.0.0")
			},
			want: []string{"timeout while waiting for plugin to start", "its stderr ended: testplugin: waiting for a database that never answers"},
		},
		{
			name: "crashes at start", mode: "rel_run",
			install: func(t *testing.T, dir string) string {
				if testing.Short() {
					t.Skip(shortSkip)
				}
				path := filepath.Join(dir, "promptkit-sandbox-rel")
				script := "#!/bin/sh\necho 'rel: cannot read /etc/rel.conf: permission denied' >&2\nexit 3\n"
				if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: []string{"its stderr ended: rel: cannot read /etc/rel.conf: permission denied"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pdir := filepath.Join(dir, "plugins")
			if err := os.Mkdir(pdir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := tc.install(t, pdir)
			cfg := filepath.Join(dir, "runtime.yaml")
			doc := "apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n  sandboxes:\n    box:\n      mode: " + tc.mode +
				"\n  hooks:\n    h:\n      command: x\n      hook: provider\n      phases: [before_call]\n      sandbox: box\n"
			if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := hooks.Options{Plugins: func(string, []string) (hooks.Plugins, error) {
				return New(Options{Dirs: []string{pdir}, Env: emptyEnv(t), CacheDir: t.TempDir(), StartTimeout: 2 * time.Second})
			}}
			rt, err := hooks.Load(cfg, opts)
			if err == nil {
				_ = rt.Close(t.Context())
				t.Fatal("Load succeeded")
			}
			msg := err.Error()
			for _, want := range append([]string{
				`unknown sandbox mode "` + tc.mode + `"`,
				"plugin " + path + " could not be asked which modes it serves: start plugin " + path + ": ",
			}, tc.want...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q:\n%s", want, msg)
				}
			}
		})
	}
}
