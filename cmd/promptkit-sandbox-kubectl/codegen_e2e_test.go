package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestCodegenVolumeAndPauseThroughTheCLI is what a user does on
// Kubernetes, with the built CLI and plugin and a serve holding the
// sandboxes, as the service account of deploy/kubernetes/codegen: `codegen
// up --workspace-volume`, files written, `codegen down`, `codegen up` on
// the same volume finds them; `codegen pause`, a call gets the clear
// error, `codegen ls` says paused, `codegen resume`, the same files;
// `codegen ls --volumes` lists the volume; `codegen down --purge`
// deletes its claim.
func TestCodegenVolumeAndPauseThroughTheCLI(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.ImportImage(ctx, img.Ref); err != nil {
		t.Fatal(err)
	}
	class, _ := k.LocalVolumes(t, 1, "1Gi") // before the namespace: see LocalVolumes
	ns := k.Namespace(t)
	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.4.0")
	copyKubeconfig(t, k.CodegenKubeconfig(t, ns), dir)
	cfg := filepath.Join(dir, "runtime.yaml")
	body := `spec:
  sandboxes:
    code:
      mode: kubectl_codegen
      image: ` + img.Ref + `
      kubeconfig: ./kubeconfig
      memory: 512Mi
      cpus: 500m
      workspace_size: 1Gi
      storage_class: ` + class + `
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// A short socket path: a unix socket's is at most 107 bytes.
	sockDir, err := os.MkdirTemp("", "pks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s.sock")
	startServe(t, cli, sock, "--plugin-dir", pluginDir, "--config", cfg)

	run := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, cli, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}
	up := func() plugin.Provisioned {
		t.Helper()
		code, out, stderr := run("codegen", "up", "--plugin-dir", pluginDir, "--config", cfg, "--sandbox", "code",
			"--workspace-volume", "kept", "--socket", sock, "--json")
		var got plugin.Provisioned
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.WorkspaceVolume != "kept" {
			t.Fatalf("codegen up --workspace-volume kept: exit %d\n%s\n%s", code, out, stderr)
		}
		return got
	}
	ok := func(args ...string) string {
		t.Helper()
		code, out, stderr := run(append(args, "--socket", sock)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, stderr)
		}
		return out
	}

	first := up()
	cs := mcptest.Connect(t, first.Endpoint, first.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "written before down\n"})
	ok("codegen", "down", first.ID)

	second := up()
	cs = mcptest.Connect(t, second.Endpoint, second.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "written before down") {
		t.Errorf("Read after down and up on the same volume: %q", out)
	}

	if out := ok("codegen", "pause", second.ID); strings.TrimSpace(out) != "paused "+second.ID {
		t.Errorf("codegen pause: %q", out)
	}
	req, _ := http.NewRequest(http.MethodPost, second.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+second.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(msg), "codegen sandbox "+second.ID+" is paused") {
		t.Errorf("a call while paused: %d %s", resp.StatusCode, msg)
	}
	t.Logf("a call while paused: %d %s", resp.StatusCode, msg)
	if out := ok("codegen", "ls"); !lineWith(out, second.ID, "paused", "volume kept") {
		t.Errorf("codegen ls while paused:\n%s", out)
	}
	ok("codegen", "resume", second.ID)
	cs = mcptest.Connect(t, second.Endpoint, second.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "written before down") {
		t.Errorf("Read after resume: %q", out)
	}
	if out := ok("codegen", "ls", "--volumes"); !lineWith(out, "kept", "kubectl_codegen", second.ID) {
		t.Errorf("codegen ls --volumes:\n%s", out)
	}
	ok("codegen", "down", second.ID, "--purge")
	if out := ok("codegen", "ls", "--volumes"); strings.Contains(out, "kept") {
		t.Errorf("codegen ls --volumes after down --purge:\n%s", out)
	}
	claims, err := k.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 0 {
		t.Errorf("claims after down --purge: %v %v", claims, err)
	}
}

// lineWith reports whether a line of out has every word.
func lineWith(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

// startServe starts `cli serve --socket sock args...` and waits until it
// listens; the test's end SIGTERMs it (serve releases what it holds).
func startServe(t *testing.T, cli, sock string, args ...string) {
	t.Helper()
	cmd := exec.Command(cli, append([]string{"serve", "--socket", sock}, args...)...)
	var mu sync.Mutex
	var stderr bytes.Buffer
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Error("serve did not stop within a minute of SIGTERM")
		}
	})
	logged := func() string { mu.Lock(); defer mu.Unlock(); return stderr.String() }
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logged(), "promptkit-sandbox: serving: socket="); {
		select {
		case <-done:
			t.Fatalf("serve exited before listening:\n%s", logged())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen within a minute:\n%s", logged())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
