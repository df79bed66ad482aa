package promptkit_test

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/AltairaLabs/PromptKit/runtime/hooks"
	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
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
// sandbox (a resident in the container), and the adapter's docker_run
// with a warm pool for scale.
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
	b.Run("adapter=docker_run-pool", func(b *testing.B) {
		sb, err := a.Factory("docker_run")("fresh", map[string]any{"image": dockertest.Image(b, dockertest.Hooks), "pool": 1})
		if err != nil {
			b.Fatal(err)
		}
		benchProviderHook(b, sb, "/hooks/verdict")
	})
}
