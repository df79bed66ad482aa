package dockerbox

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestPluginEndToEnd builds the plugin binary, lets the plugin host
// discover and start it, and runs both modes through it: the typed errors
// and the cleanup hold across the plugin hop, and the plugin removes a
// dead plugin's container when it starts.
func TestPluginEndToEnd(t *testing.T) {
	img := busyboxImage(t)
	dir := buildPlugin(t)

	// A container left by a plugin process that died.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	staleName := uniqueName(t)
	cleanupNamed(t, staleName)
	stale := docker(t, "create", "--network", "none", "--label", LabelPlugin+"="+PluginName, "--label", LabelName+"="+staleName,
		"--label", LabelPID+"="+strconv.Itoa(dead.Process.Pid), "--label", LabelHost+"="+hostname(), img, "sleep", "60")

	h, err := host.New(host.Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })

	runName := uniqueName(t)
	cleanupNamed(t, runName)
	run, err := h.Open(config.Sandbox{Name: runName, Mode: RunMode, Version: "~> 1.2", Config: map[string]any{"image": img, "output_limit": 1 << 20}})
	if err != nil {
		t.Fatalf("open docker_run: %v", err)
	}
	t.Cleanup(func() { run.(sandbox.Closer).Close() })
	ctx := ctxTimeout(t, 2*time.Minute)
	resp, err := run.Spawn(ctx, sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "cat; echo \"$V\" >&2; exit 7"}, Stdin: []byte("in"), Env: []string{"V=env-ok"},
	})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 7 || string(resp.Stdout) != "in" || string(resp.Stderr) != "env-ok\n" {
		t.Fatalf("docker_run: err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
	}
	_, err = run.Spawn(ctx, sandbox.Request{Command: "sleep", Args: []string{"60"}, Timeout: 700 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 700ms") {
		t.Fatalf("docker_run timeout: err = %v", err)
	}
	assertNoContainersSoon(t, runName)

	c := startContainer(t)
	ex, err := h.Open(config.Sandbox{Name: uniqueName(t), Mode: ExecMode, Config: map[string]any{"container": c}})
	if err != nil {
		t.Fatalf("open docker_exec: %v", err)
	}
	t.Cleanup(func() { ex.(sandbox.Closer).Close() })
	resp, err = ex.Spawn(ctx, sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "cat; echo \"$V\" >&2"}, Stdin: []byte("in"), Env: []string{"V=env-ok"}})
	if err != nil || string(resp.Stdout) != "in" || string(resp.Stderr) != "env-ok\n" {
		t.Fatalf("docker_exec: err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
	}
	_, err = ex.Spawn(ctx, sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "sleep 321 & sleep 322"}, Timeout: 700 * time.Millisecond})
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("docker_exec timeout: err = %v", err)
	}
	if left := leftovers(t, c); len(left) > 0 {
		t.Fatalf("processes left in the container:\n%s", strings.Join(left, "\n"))
	}
	_, err = h.Open(config.Sandbox{Name: "missing", Mode: RunMode, Config: map[string]any{"image": "promptkit-sandbox-test/absent:0"}})
	if err == nil || !strings.Contains(err.Error(), "image promptkit-sandbox-test/absent:0 is not present locally") {
		t.Fatalf("open with a missing image: err = %v", err)
	}

	// The plugin started (above) removed the stale container meanwhile.
	deadline := time.Now().Add(20 * time.Second)
	for len(containersNamed(t, staleName)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("stale container %s not removed at plugin start", stale[:12])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
