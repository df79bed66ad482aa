package host

import (
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestConformance runs the contract's suite against the direct backend
// through a plugin binary: the test plugin serves the real direct
// Factory as conf_direct, and the host discovers, starts and speaks to
// it as to any plugin. (The in-process cell is in internal/direct.)
func TestConformance(t *testing.T) {
	t.Parallel()
	var once sync.Once
	var h *Host
	sandboxtest.Conformance(t, sandboxtest.Cell{
		Name: "direct-plugin",
		Open: func(t *testing.T, cfg map[string]any) sandbox.Sandbox {
			once.Do(func() {
				dir := t.TempDir()
				install(t, testPlugin, dir, "promptkit-sandbox-conf_v1.0.0")
				h = newHost(t, Options{Dirs: []string{dir}})
			})
			if h == nil {
				t.Fatal("the plugin host did not start")
			}
			return open(t, h, config.Sandbox{Name: "conformance", Mode: "conf_direct", Config: cfg})
		},
		Options: sandboxtest.Options{
			KillTimeout: 500 * time.Millisecond,
			Slack:       3 * time.Second,
		},
	})
}
