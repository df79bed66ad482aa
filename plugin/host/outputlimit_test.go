package host

import (
	"testing"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestSandboxReportsThePluginsOutputLimit: a sandbox passed on (serve
// lends them to exec) must say how much output its plugin sends.
func TestSandboxReportsThePluginsOutputLimit(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Name: "sb", Mode: "test_direct", Config: map[string]any{"output_limit": 1234}})
	ol, ok := sb.(plugin.OutputLimiter)
	if !ok || ol.OutputLimit() != 1234 {
		t.Fatalf("sandbox %T: OutputLimiter %v, want a limit of 1234", sb, ok)
	}
}
