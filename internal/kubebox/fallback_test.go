package kubebox

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubetest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestFallsBackToSPDY: against an API server that refuses WebSocket
// upgrades (before 1.30, or behind a proxy that blocks them; the real
// cluster does not, so this runs on the loopback fake) the native
// transport falls back to SPDY, and asks for a WebSocket only once.
func TestFallsBackToSPDY(t *testing.T) {
	t.Parallel()
	dockertest.Require(t)
	srv := kubetest.Start(t)
	srv.RefuseWebSockets()
	ctr := strings.TrimSpace(dockertest.Docker(t, "run", "-d", "--init", "--network", "none",
		"--label", dockertest.UniqueLabel(t), dockertest.Image(t, dockertest.Busybox), "sleep", "3600"))
	srv.AddPod("promptkit", testPod, nil, map[string]string{testContainer: ctr})
	kc := srv.Kubeconfig(t, t.TempDir(), "promptkit")
	seen := map[string]int{}
	for _, resident := range []bool{false, true} {
		sb, err := Factory(context.Background(), uniqueName(t), map[string]any{"kubeconfig": kc, "pod": testPod, "resident": resident, "warm": 0})
		if err != nil {
			t.Fatalf("resident %v: Factory: %v", resident, err)
		}
		for i := range 3 {
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "cat", Stdin: []byte("over spdy")})
			if err != nil || string(resp.Stdout) != "over spdy" {
				t.Fatalf("resident %v, call %d: %v %q", resident, i, err, resp.Stdout)
			}
		}
		if err := sb.(*Sandbox).Close(); err != nil {
			t.Fatal(err)
		}
		// Each sandbox has a client of its own, which learns on its own.
		all := srv.ExecProtocols()
		got := maps.Clone(all)
		for p, n := range seen {
			got[p] -= n
		}
		seen = all
		if got["websocket/refused"] != 1 {
			t.Errorf("resident %v: %d WebSocket upgrades tried, want 1 (then SPDY only): %v", resident, got["websocket/refused"], got)
		}
		for p := range got {
			if p != "websocket/refused" && !strings.HasPrefix(p, "spdy/") {
				t.Errorf("resident %v: served over %s", resident, p)
			}
		}
	}
}
