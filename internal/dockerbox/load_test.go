package dockerbox

import (
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestLoad: 200 calls, 50 at a time, on each mode with its defaults;
// none fails, and no descriptor, process or container is left of them.
// Each call leaves a daemon behind: docker_run's dies with its
// container, docker_exec's with its call (the resident sweeps it).
func TestLoad(t *testing.T) {
	t.Run("docker_run", func(t *testing.T) {
		name := uniqueName(t)
		sb := openRun(t, name, map[string]any{})
		marker := sandboxtest.NewMarker()
		req := sandbox.Request{Command: "sh", Args: []string{"-c", `(setsid sleep "$0" >/dev/null 2>&1 </dev/null &); echo ok`, marker}, Timeout: 2 * time.Minute}
		sandboxtest.Load(t, sb, req, "ok\n", 200, 50, 15*time.Second)
		settle(sb)
		assertNoContainers(t, name)
		sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	})
	t.Run("docker_exec", func(t *testing.T) {
		sb := openExec(t, startContainer(t), map[string]any{})
		marker := sandboxtest.NewMarker()
		req := sandbox.Request{Command: "sh", Args: []string{"-c", `(setsid sleep "$0" >/dev/null 2>&1 </dev/null &); echo ok`, marker}, Timeout: 2 * time.Minute}
		sandboxtest.Load(t, sb, req, "ok\n", 200, 50, 15*time.Second)
		sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	})
}
