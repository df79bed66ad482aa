package direct_test

import (
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// TestLoad: 200 calls, 50 at a time, each leaving a daemon behind;
// none fails, and nothing of them is left.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test: not under -short")
	}
	sb := direct.New("load", shell.Options{})
	marker := sandboxtest.NewMarker()
	req := sandbox.Request{Command: "sh", Args: []string{"-c", `(setsid sleep "$0" >/dev/null 2>&1 </dev/null &); echo ok`, marker}, Timeout: time.Minute}
	sandboxtest.Load(t, sb, req, "ok\n", 200, 50, 10*time.Second)
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
}
