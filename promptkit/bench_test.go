package promptkit_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/runtime/hooks"
	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// dockerExecPerCall is the sandbox PromptKit's examples write: one
// `docker exec -i` per call. It is the baseline the adapter is measured
// against.
type dockerExecPerCall struct{ container string }

func (d dockerExecPerCall) Name() string { return "docker-exec-per-call" }

func (d dockerExecPerCall) Spawn(ctx context.Context, req pksandbox.Request) (pksandbox.Response, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	args := []string{"exec", "-i"}
	for _, kv := range req.Env {
		args = append(args, "-e", kv)
	}
	args = append(append(args, d.container, req.Command), req.Args...)
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdin = bytes.NewReader(req.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return pksandbox.Response{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Err: err}, nil
}

// execSetup builds the CLI and writes a RuntimeConfig of ours declaring
// the docker_exec sandbox "sidecar" in container id, for hooks whose
// command is promptkit-sandbox exec run by PromptKit's own direct
// sandbox (a nil Sandbox). runtimeDir is an empty directory for sockets.
func execSetup(b *testing.B, id string) (cli, cfg, runtimeDir string) {
	dir := b.TempDir()
	cli = plugintest.BuildCLI(b, dir)
	cfg = writeFile(b, filepath.Join(dir, "sandboxes.yaml"),
		"spec:\n  sandboxes:\n    sidecar:\n      mode: docker_exec\n      container: "+id+"\n")
	runtimeDir, err := os.MkdirTemp("", "pks-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(runtimeDir) })
	return cli, cfg, runtimeDir
}

// startServe runs promptkit-sandbox serve until the benchmark ends.
func startServe(b *testing.B, cli string, args ...string) {
	cmd := exec.Command(cli, append([]string{"serve"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	socket := args[len(args)-1]
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("serve did not listen on %s:\n%s", socket, stderr.String())
		}
	}
}

// benchProviderHook runs one allowed before_call through PromptKit's
// ExecProviderHook in sb per iteration.
func benchProviderHook(b *testing.B, sb pksandbox.Sandbox, command string, args ...string) {
	h := hooks.NewExecProviderHook(&hooks.ExecHookConfig{
		Name: "guard", Command: command, Args: args, TimeoutMs: 30000,
		Phases: []string{"before_call"}, Mode: "filter", Sandbox: sb,
	})
	req := providerRequest("hello")
	ctx := context.Background()
	if d := h.BeforeCall(ctx, req); !d.Allow {
		b.Fatalf("first call: %+v", d)
	}
	for b.Loop() {
		if d := h.BeforeCall(ctx, req); !d.Allow {
			b.Fatalf("%+v", d)
		}
	}
}

// BenchmarkProviderHook compares a call through PromptKit's
// ExecProviderHook into one sidecar container: a `docker exec -i` per
// call (PromptKit's example approach) against the adapter's docker_exec
// sandbox (a resident in the container), promptkit-sandbox exec as the
// hook command in PromptKit's own direct sandbox, cold and through a
// serve (the route for programs that cannot be recompiled), and the
// adapter's docker_run with a warm pool for scale.
func BenchmarkProviderHook(b *testing.B) {
	dockertest.Require(b)
	id := sidecar(b, b.TempDir())
	b.Run("baseline=docker-exec-per-call", func(b *testing.B) {
		benchProviderHook(b, dockerExecPerCall{container: id}, "/hooks/verdict")
	})
	a := newAdapter(b, b.TempDir(), nil)
	b.Run("adapter=docker_exec", func(b *testing.B) {
		sb, err := a.Factory("docker_exec")("sidecar", map[string]any{"container": id})
		if err != nil {
			b.Fatal(err)
		}
		benchProviderHook(b, sb, "/hooks/verdict")
	})
	b.Run("exec-cold=docker_exec", func(b *testing.B) {
		cli, cfg, runtimeDir := execSetup(b, id)
		benchProviderHook(b, nil, cli, "exec", "--plugin-dir", pluginDir(b), "--config", cfg, "--sandbox", "sidecar",
			"--env", "XDG_RUNTIME_DIR="+runtimeDir, "--", "/hooks/verdict")
	})
	b.Run("exec-serve=docker_exec", func(b *testing.B) {
		cli, cfg, runtimeDir := execSetup(b, id)
		socket := filepath.Join(runtimeDir, "serve.sock")
		startServe(b, cli, "--plugin-dir", pluginDir(b), "--config", cfg, "--socket", socket)
		benchProviderHook(b, nil, cli, "exec", "--socket", socket, "--config", cfg, "--sandbox", "sidecar", "--", "/hooks/verdict")
	})
	b.Run("adapter=docker_run-pool", func(b *testing.B) {
		sb, err := a.Factory("docker_run")("fresh", map[string]any{"image": dockertest.Image(b, dockertest.Hooks), "pool": 1})
		if err != nil {
			b.Fatal(err)
		}
		benchProviderHook(b, sb, "/hooks/verdict")
	})
}
