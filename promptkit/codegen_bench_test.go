package promptkit_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// BenchmarkResolveToFirstToolAnswer times what a PromptKit program waits
// for from asking for a codegen sandbox to the answer of its first tool
// call, through PromptKit's agent loop, two ways in the same run:
//
//   - ours: sdk.Open with MCPServer (the provider starts the container
//     and waits for sandboxd's initialize), then the call;
//   - ours-warm: the same with `warm: 1`, the sandbox taken from the
//     provider's pool (its refill is waited for, untimed);
//   - docker-run-poll: PromptKit's own codegen-resolver example
//     (sdk/examples/codegen-resolver) with our image: `docker run -d -p`,
//     GET /sse every 250 ms until it answers 2xx, sdk.Open with a
//     StaticMCPEndpointResolver, then the call.
//
// Compare them as a ratio (the target: ours at most half the baseline).
// Releasing the sandbox is not timed in either.
func BenchmarkResolveToFirstToolAnswer(b *testing.B) {
	env := newCodegenEnv(b, "")
	image := realImage(b)
	a := newAdapter(b, env.base, nil)
	if err := a.Register(nil); err != nil {
		b.Fatal(err)
	}
	b.Run("promptkit-sandbox", func(b *testing.B) {
		opt := a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox})
		for b.Loop() {
			conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(firstCallModel()), opt)
			if err != nil {
				b.Fatalf("sdk.Open: %v (%v)", err, a.LastCodegenError())
			}
			firstCall(b, conv)
			b.StopTimer()
			if err := conv.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	warmEnv := newCodegenEnv(b, "warm: 1\n")
	warm := a // PromptKit takes one adapter's registration
	b.Run("promptkit-sandbox-warm", func(b *testing.B) {
		opt := warm.MCPServer("codegen", promptkit.MCPOptions{Sandbox: warmEnv.sandbox})
		// The pool fills once PromptKit has loaded the config: a first
		// conversation, untimed, has it load.
		first, err := sdk.Open(warmEnv.pack, "code", sdk.WithRuntimeConfig(warmEnv.cfg), sdk.WithProvider(firstCallModel()), opt)
		if err != nil {
			b.Fatalf("sdk.Open: %v (%v)", err, warm.LastCodegenError())
		}
		firstCall(b, first)
		if err := first.Close(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			waitWarm(b, warmEnv, 1)
			b.StartTimer()
			conv, err := sdk.Open(warmEnv.pack, "code", sdk.WithRuntimeConfig(warmEnv.cfg), sdk.WithProvider(firstCallModel()), opt)
			if err != nil {
				b.Fatalf("sdk.Open: %v (%v)", err, warm.LastCodegenError())
			}
			firstCall(b, conv)
			b.StopTimer()
			if err := conv.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("docker-run-poll", func(b *testing.B) {
		label := dockertest.UniqueLabel(b)
		for b.Loop() {
			url, token, id := dockerRunPoll(b, image, label)
			conv, err := sdk.Open(env.pack, "code", sdk.WithProvider(firstCallModel()),
				sdk.WithMCPServer(sdk.NewMCPServerByName("codegen")),
				sdk.WithMCPEndpoints(&sdk.StaticMCPEndpointResolver{URL: url, Headers: map[string]string{"Authorization": "Bearer " + token}}))
			if err != nil {
				b.Fatal(err)
			}
			firstCall(b, conv)
			b.StopTimer()
			_ = conv.Close()
			dockertest.Docker(b, "rm", "-f", id)
			b.StartTimer()
		}
	})
}

// waitWarm waits until the env's sandbox has n containers, the pool's
// (the claimed ones are released), and then for the last to answer: the
// pool holds a sandbox only once its initialize was answered, and a
// start takes well under a second on a quiet engine.
func waitWarm(b *testing.B, env codegenEnv, n int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for env.containers(b) != n {
		if time.Now().After(deadline) {
			b.Fatalf("the pool of %s has not %d containers after a minute", env.sandbox, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
}

// firstCallModel asks for one Glob, then ends the turn.
func firstCallModel() *scriptedModel {
	return newScriptedModel(call(tool("Glob", map[string]any{"pattern": "*"})), say("done"))
}

// firstCall sends one message and checks the tool answered.
func firstCall(b *testing.B, conv *sdk.Conversation) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := conv.Send(ctx, "look")
	if err != nil || resp.Text() != "done" {
		b.Fatalf("Send: %v", err)
	}
}

// Polling as PromptKit's codegen-resolver example does.
const (
	pollInterval = 250 * time.Millisecond
	pollBudget   = 30 * time.Second
	sandboxdPort = 8080
)

// dockerRunPoll starts the image as PromptKit's example does and polls
// until sandboxd's SSE stream answers. It publishes on loopback only.
func dockerRunPoll(b *testing.B, image, label string) (url, token, id string) {
	b.Helper()
	port := freePort(b)
	token = randomHex(b) + randomHex(b) + randomHex(b) + randomHex(b) // sandboxd wants 32 characters beyond loopback
	id = strings.TrimSpace(dockertest.Docker(b, "run", "-d", "--rm", "--label", label,
		"-p", fmt.Sprintf("127.0.0.1:%d:%d", port, sandboxdPort), "-e", "SANDBOXD_TOKEN="+token,
		"--tmpfs", "/tmp", image, "--workspace", "/workspace", "--addr", fmt.Sprintf("0.0.0.0:%d", sandboxdPort)))
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(pollBudget)
	for time.Now().Before(deadline) {
		if sseAnswers(url, token) {
			return url, token, id
		}
		time.Sleep(pollInterval)
	}
	b.Fatalf("sandboxd in %s not ready within %s: %s", id, pollBudget, dockertest.Docker(b, "logs", id))
	return "", "", ""
}

// sseAnswers is the example's readiness probe, with the token our
// sandboxd requires.
func sseAnswers(url, token string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/sse", http.NoBody)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 300
}

func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
