package promptkit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/runtime/hooks"
	"github.com/AltairaLabs/PromptKit/runtime/providers/mock"
	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

const pack = `{
  "id": "adapter-test",
  "name": "Adapter test",
  "version": "1.0.0",
  "template_engine": {"version": "v1", "syntax": "{{variable}}"},
  "prompts": {
    "chat": {"id": "chat", "name": "Chat", "version": "1.0.0", "system_template": "You are a test."}
  }
}
`

// TestSDKOpenCyclesShareOneSandbox opens and closes ten conversations
// with sdk.Open and WithRuntimeConfig, as a PromptKit program does, with
// a docker_run sandbox keeping a warm pool of one. Register runs before
// each Open. Every conversation gets its hook's verdicts, the sandbox is
// opened once and shared, and the warm containers stay as many as after
// the first conversation; Close removes them.
func TestSDKOpenCyclesShareOneSandbox(t *testing.T) {
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Hooks)
	base := t.TempDir()
	name := "pool_" + randomHex(t)
	cfg := writeFile(t, filepath.Join(base, "runtime.yaml"), fmt.Sprintf(`apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
spec:
  sandboxes:
    %s:
      mode: docker_run
      image: %s
      pool: 1
  hooks:
    guard:
      command: /hooks/verdict
      hook: provider
      phases: [before_call]
      timeout_ms: 30000
      sandbox: %s
`, name, image, name))
	packPath := writeFile(t, filepath.Join(base, "agent.pack.json"), pack)
	a := newAdapter(t, base, nil)
	label := "org.promptkit.sandbox.name=" + name
	dockertest.Cleanup(t, label)

	var counts []int
	for i := range 10 {
		if err := a.Register(nil); err != nil {
			t.Fatalf("cycle %d: Register: %v", i, err)
		}
		conv, err := sdk.Open(packPath, "chat", sdk.WithRuntimeConfig(cfg),
			sdk.WithProvider(mock.NewProvider("mock", "mock-model", false)))
		if err != nil {
			t.Fatalf("cycle %d: sdk.Open: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := conv.Send(ctx, "hello"); err != nil {
			t.Errorf("cycle %d: allowed message: %v", i, err)
		}
		_, err = conv.Send(ctx, "please deny-me")
		var denied *hooks.HookDeniedError
		if !errors.As(err, &denied) || denied.Reason != "request contains deny-me" {
			t.Errorf("cycle %d: denied message: err = %v; want the guard's deny", i, err)
		}
		cancel()
		if err := conv.Close(); err != nil {
			t.Errorf("cycle %d: close: %v", i, err)
		}
		counts = append(counts, settledContainers(t, label))
	}
	t.Logf("warm containers after each of 10 sdk.Open/Close cycles: %v", counts)
	for i, n := range counts {
		if n != counts[0] || n < 1 {
			t.Errorf("after cycle %d: %d containers, want %d as after the first (all: %v)", i, n, counts[0], counts)
			break
		}
	}
	if s := a.Stats(); s.Opened != 1 || s.Reused != 9 || s.Sandboxes != 1 {
		t.Errorf("stats = %+v; want 1 sandbox opened once and reused 9 times", s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	dockertest.AssertNoContainers(t, label)
}

// settledContainers counts the containers carrying label once the pool
// has stopped changing: a call's container goes and a new warm one comes
// in the background.
func settledContainers(t testing.TB, label string) int {
	t.Helper()
	count := func() int {
		out := strings.TrimSpace(dockertest.Docker(t, "ps", "-aq", "--filter", "label="+label))
		if out == "" {
			return 0
		}
		return len(strings.Split(out, "\n"))
	}
	last, stable := count(), 0
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && stable < 3; {
		time.Sleep(200 * time.Millisecond)
		n := count()
		if n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	return last
}

func randomHex(t testing.TB) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// TestSDKOpenThroughEveryBackend opens a conversation with sdk.Open, a
// mock provider and WithRuntimeConfig in each backend: the provider hook
// allows and denies (with metadata) through it, and the session observer
// runs at open and at close.
func TestSDKOpenThroughEveryBackend(t *testing.T) {
	base, bs, _ := registeredBackends(t)
	packPath := writeFile(t, filepath.Join(base, "agent.pack.json"), pack)
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			cfg := writeFile(t, filepath.Join(base, "sdk-"+b.name+".yaml"), fmt.Sprintf(`apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
spec:
  sandboxes:
    %s:
%s  hooks:
    guard:
      command: %s
      hook: provider
      phases: [before_call]
      timeout_ms: 30000
      sandbox: %s
    audit:
      command: %s
      hook: session
      phases: [session_start, session_end]
      mode: observe
      env: [VERDICT_LOG=%s]
      timeout_ms: 30000
      sandbox: %s
`, b.name, indent(b.entry, 6), b.hook, b.name, b.hook, b.logEnv, b.name))
			conv, err := sdk.Open(packPath, "chat", sdk.WithRuntimeConfig(cfg),
				sdk.WithProvider(mock.NewProvider("mock", "mock-model", false)))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := conv.Send(ctx, "hello"); err != nil {
				t.Errorf("allowed message: %v", err)
			}
			_, err = conv.Send(ctx, "meta-me")
			var denied *hooks.HookDeniedError
			if !errors.As(err, &denied) || denied.Reason != "request contains meta-me" ||
				denied.Metadata["rule"] != "meta" || denied.Metadata["score"] != 0.5 {
				t.Errorf("denied message: err = %v (%+v); want the guard's deny with its metadata", err, denied)
			}
			if err := conv.Close(); err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(b.logHost)
			if got := strings.TrimSpace(string(log)); err != nil || got != "session session_start\nsession session_end" {
				t.Errorf("observer log = %q, %v; want session_start then session_end", got, err)
			}
		})
	}
}
