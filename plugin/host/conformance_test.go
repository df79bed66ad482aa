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
	conformance(t, "conf")
}

// TestConformanceSpawnStreams runs the suite through a plugin that
// predates the Calls stream: every call on a Spawn stream of its own, as
// such a plugin is asked.
func TestConformanceSpawnStreams(t *testing.T) {
	t.Parallel()
	conformance(t, "legacyconf")
}

// conformance runs the suite through the test plugin installed as name.
func conformance(t *testing.T, name string) {
	var once sync.Once
	var h *Host
	sandboxtest.Conformance(t, sandboxtest.Cell{
		Name: name + "-direct-plugin",
		Open: func(t *testing.T, cfg map[string]any) sandbox.Sandbox {
			once.Do(func() {
				dir := t.TempDir()
				install(t, testPlugin, dir, "promptkit-sandbox-"+name+"_v1.0.0")
				h = newHost(t, Options{Dirs: []string{dir}})
			})
			if h == nil {
				t.Fatal("the plugin host did not start")
			}
			return open(t, h, config.Sandbox{Name: "conformance", Mode: name + "_direct", Config: cfg})
		},
		Options: sandboxtest.Options{
			KillTimeout: 500 * time.Millisecond,
			Slack:       3 * time.Second,
		},
	})
}
