package dockerbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestMain takes the resident from a static build of the plugin.
func TestMain(m *testing.M) {
	os.Exit(plugintest.RunWithResident(m, "../../cmd/promptkit-sandbox-docker"))
}

// residentPID is the PID, in the container, of the sandbox's resident.
func residentPID(t *testing.T, sb *ExecSandbox) int {
	t.Helper()
	return plugintest.Running(t, sb.res).pid
}

func TestExecResidentServesEveryCall(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{})
	pid := residentPID(t, sb)
	if _, size := sb.eng.Warm(); size != 0 {
		t.Error("warm execs kept beside a resident")
	}
	for i := range 3 {
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "echo $PPID"}})
		if err != nil || strings.TrimSpace(string(resp.Stdout)) != strconv.Itoa(pid) {
			t.Fatalf("call %d: parent %q, want the resident %d (err %v)", i, resp.Stdout, pid, err)
		}
	}
	if ps := psIn(t, c); !strings.Contains(ps, residentDir+"/resident-") {
		t.Fatalf("no resident in the container:\n%s", ps)
	}
	sb.Close()
	// Closing the sandbox ends the resident.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(psIn(t, c), residentDir+"/resident-") {
		if time.Now().After(deadline) {
			t.Fatalf("the resident outlived its sandbox:\n%s", psIn(t, c))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestExecResidentKeepsItsDescriptors(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{"user": "1234:5678"})
	pid := residentPID(t, sb)
	// A call runs as the resident's user, yet cannot reach the resident's
	// stdin or stdout (to forge frames) or read its memory.
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c",
		fmt.Sprintf(`id -u; ls /proc/%d/fd >/dev/null 2>&1 && echo fd-open; echo x > /proc/%d/fd/1 2>/dev/null && echo forged; cat /proc/%d/environ >/dev/null 2>&1 && echo environ-read; true`, pid, pid, pid)}})
	if err != nil || string(resp.Stdout) != "1234\n" {
		t.Fatalf("stdout %q stderr %q err %v: want only the uid", resp.Stdout, resp.Stderr, err)
	}
}

func TestExecResidentFallsBackOnReadOnlyRoot(t *testing.T) {
	t.Parallel()
	img := busyboxImage(t)
	c := docker(t, "run", "-d", "--init", "--read-only", "--network", "none", "--label", dockertest.UniqueLabel(t), img, "sleep", "3600")
	sb := openExec(t, c, map[string]any{})
	plugintest.FailedToStart(t, sb.res, "copy the resident")
	if _, size := sb.eng.Warm(); size == 0 {
		t.Error("no warm execs without a resident")
	}
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "cat", Stdin: []byte("still works")})
	if err != nil || string(resp.Stdout) != "still works" {
		t.Fatalf("stdout %q err %v", resp.Stdout, err)
	}
}

func TestExecResidentAfterContainerRestart(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{})
	first := residentPID(t, sb)
	docker(t, "restart", "-t", "0", c)
	time.Sleep(resident.RetryInterval)
	for i := range 3 {
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "cat", Stdin: []byte("after")})
		if err != nil || string(resp.Stdout) != "after" {
			t.Fatalf("call %d after restart: stdout %q err %v", i, resp.Stdout, err)
		}
	}
	if sess, ok := sb.res.Current(); !ok || sess.Client().Err() != nil {
		t.Fatal("no resident after the restart")
	}
	if !strings.Contains(psIn(t, c), residentDir+"/resident-") {
		t.Fatalf("no resident in the restarted container (the first was pid %d)", first)
	}
}
