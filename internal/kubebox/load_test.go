package kubebox

import (
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestLoad: 200 calls, 50 at a time, through the native transport's
// default (the resident), each leaving a daemon behind; none fails, and
// no descriptor, process or daemon is left of them.
func TestLoad(t *testing.T) {
	c := startCluster(t)
	sb := c.open(t, TransportNative, map[string]any{})
	marker := sandboxtest.NewMarker()
	req := sandbox.Request{Command: "sh", Args: []string{"-c", `(setsid sleep "$0" >/dev/null 2>&1 </dev/null &); echo ok`, marker}, Timeout: 2 * time.Minute}
	sandboxtest.Load(t, sb, req, "ok\n", 200, 50, 15*time.Second)
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
}
