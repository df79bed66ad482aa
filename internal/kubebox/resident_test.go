package kubebox

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// residentPID is the PID, in the pod's container, of the sandbox's
// resident.
func residentPID(t *testing.T, sb *Sandbox) int {
	t.Helper()
	return plugintest.Running(t, sb.res).pid
}

func TestResidentServesEveryCall(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	sb := c.open(t, TransportNative, map[string]any{})
	pid := residentPID(t, sb)
	if warmSize(sb) != 0 {
		t.Error("warm sessions kept beside a resident")
	}
	for i := range 3 {
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "echo $PPID"}})
		if err != nil || strings.TrimSpace(string(resp.Stdout)) != strconv.Itoa(pid) {
			t.Fatalf("call %d: parent %q, want the resident %d (err %v)", i, resp.Stdout, pid, err)
		}
	}
	ps := c.ps(t, testPod)
	if !strings.Contains(ps, " "+resident.Flag) {
		t.Fatalf("no resident in the container:\n%s", ps)
	}
	// A second sandbox finds it installed and starts its own.
	other := c.open(t, TransportNative, map[string]any{})
	if residentPID(t, other) == pid {
		t.Fatal("the second sandbox has no resident of its own")
	}
	sb.Close()
	other.Close()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(c.ps(t, testPod), " "+resident.Flag) {
		if time.Now().After(deadline) {
			t.Fatal("a resident outlived its sandbox")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestResidentFallsBackWithoutTempDir(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	// The container's /tmp is a file: nowhere to install the resident.
	c.exec(t, testPod, "/bin/sh", "-c", "rm -rf /tmp && touch /tmp")
	sb := c.open(t, TransportNative, map[string]any{})
	plugintest.FailedToStart(t, sb.res, "copy the resident")
	if warmSize(sb) == 0 {
		t.Error("no warm sessions without a resident")
	}
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "cat", Stdin: []byte("still works")})
	if err != nil || string(resp.Stdout) != "still works" {
		t.Fatalf("stdout %q err %v", resp.Stdout, err)
	}
}
