package plugintest

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Opener opens a sandbox through a plugin host.
type Opener func(t *testing.T, name, mode string, cfg map[string]any) sandbox.Sandbox

// Host builds the plugin in pkgDir as NAME_v1.0.0 (binary is
// promptkit-sandbox-NAME) into a directory of its own, starts a plugin
// host that discovers it, and returns an Opener for its modes. The host's
// log is shown only when the test fails; the host stops the plugin when t
// ends.
func Host(t *testing.T, binary, pkgDir string) Opener {
	t.Helper()
	dir := t.TempDir()
	GoBuild(t, filepath.Join(dir, binary+"_v1.0.0"), pkgDir, "-X main.version=1.0.0")
	h, err := host.New(host.Options{Dirs: []string{dir}, Logger: hclog.New(&hclog.LoggerOptions{
		Name: "host", Level: hclog.Debug, Output: sandboxtest.LogTail(t, "the plugin host's log", 256<<10),
	})})
	if err != nil {
		t.Fatalf("plugin host: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("closing the plugin host: %v", err)
		}
	})
	return func(t *testing.T, name, mode string, cfg map[string]any) sandbox.Sandbox {
		t.Helper()
		sb, err := h.Open(config.Sandbox{Name: name, Mode: mode, Version: "1.0.0", OpenTimeout: sandboxtest.OpenTimeout, Config: cfg})
		if err != nil {
			t.Fatalf("open %s through the plugin: %v", mode, err)
		}
		return sb
	}
}
