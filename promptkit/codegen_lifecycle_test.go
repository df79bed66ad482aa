package promptkit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// TestSDKCodegenCycles: twenty sdk.Open/Close cycles each get a sandbox
// of their own, and never more than one is alive at a time.
func TestSDKCodegenCycles(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	opt := a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox})
	seen := map[string]bool{}
	for i := range 20 {
		conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(newScriptedModel()), opt)
		if err != nil {
			t.Fatalf("cycle %d: sdk.Open: %v (%v)", i, err, a.LastCodegenError())
		}
		held := a.CodegenSandboxes()
		if len(held) != 1 || seen[held[0].Instance] {
			t.Fatalf("cycle %d: the adapter holds %d sandboxes (%v); want one new one", i, len(held), held)
		}
		seen[held[0].Instance] = true
		if n := env.containers(t); n != 1 {
			t.Errorf("cycle %d: %d containers alive; want 1", i, n)
		}
		if err := conv.Close(); err != nil {
			t.Fatalf("cycle %d: Close: %v", i, err)
		}
		if n := len(a.CodegenSandboxes()); n != 0 {
			t.Fatalf("cycle %d: %d sandboxes held after Close", i, n)
		}
	}
	waitContainers(t, env, 0)
}

// TestSDKCodegenConcurrentConversations: ten conversations opened at once
// get ten sandboxes, each with a workspace of its own; Adapter.Close
// releases those still open.
func TestSDKCodegenConcurrentConversations(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	opt := a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox})
	const n = 10
	convs := make([]*sdk.Conversation, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			convs[i], errs[i] = sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(newScriptedModel()), opt)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("conversation %d: %v", i, err)
		}
	}
	held := a.CodegenSandboxes()
	workspaces := map[string]bool{}
	for _, s := range held {
		workspaces[s.Workspace] = true
	}
	if len(held) != n || len(workspaces) != n {
		t.Fatalf("%d sandboxes on %d workspaces for %d conversations", len(held), len(workspaces), n)
	}
	if got := env.containers(t); got != n {
		t.Errorf("%d containers; want %d", got, n)
	}
	// Half close as conversations; the adapter releases the rest.
	for _, c := range convs[:n/2] {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
	if got := len(a.CodegenSandboxes()); got != n-n/2 {
		t.Errorf("%d sandboxes held after closing %d conversations; want %d", got, n/2, n-n/2)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitContainers(t, env, 0)
	for _, c := range convs[n/2:] {
		_ = c.Close()
	}
}

// TestSDKCodegenProviderFails: a sandbox the provider cannot start (its
// image does not exist) fails sdk.Open, and the reason is logged and
// kept: PromptKit itself says only that the resolver returned no URL.
func TestSDKCodegenProviderFails(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	_, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(newScriptedModel()),
		a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox, Image: "promptkit-test/no-such-image:0"}))
	if err == nil || !strings.Contains(err.Error(), `no URL for server "codegen"`) {
		t.Fatalf("sdk.Open: %v; want PromptKit's no-URL error", err)
	}
	var re *promptkit.ResolveError
	last := a.LastCodegenError()
	if !errors.As(last, &re) || re.Server != "codegen" || !strings.Contains(last.Error(), "promptkit-test/no-such-image:0") {
		t.Fatalf("LastCodegenError() = %v; want a *ResolveError for codegen naming the image", last)
	}
	t.Logf("what the user sees: sdk.Open: %v; LastCodegenError: %v", err, last)
	if n := len(a.CodegenSandboxes()); n != 0 {
		t.Errorf("%d sandboxes held after a failed resolve", n)
	}
}

// TestSDKCodegenUndeclared: a server name no RuntimeConfig declares
// fails the open, and LastCodegenError says what is declared.
func TestSDKCodegenUndeclared(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	_, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(newScriptedModel()),
		a.MCPServer("codegen", promptkit.MCPOptions{}))
	if err == nil {
		t.Fatal("sdk.Open resolved an undeclared sandbox")
	}
	var un *promptkit.UndeclaredError
	if !errors.As(a.LastCodegenError(), &un) || un.Name != "codegen" || strings.Join(un.Declared, ",") != env.sandbox {
		t.Fatalf("LastCodegenError() = %v; want an *UndeclaredError listing %s", a.LastCodegenError(), env.sandbox)
	}
}

// TestSDKCodegenStreamableHTTP: PromptKit v1.5.11 speaks Streamable HTTP
// only to a server whose RuntimeConfig entry has a literal url and
// transport streamable_http (its SDK builder has no transport, its
// RuntimeConfig refuses streamable_http without a url, and arena's
// sources are dialled over SSE). A sandbox from ProvisionCodegen serves
// it at the same base URL the resolver hands out for SSE.
func TestSDKCodegenStreamableHTTP(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := a.ProvisionCodegen(ctx, promptkit.CodegenRequest{Sandbox: env.sandbox, RuntimeConfig: env.cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	cfg := writeFile(t, filepath.Join(env.base, "streamable.yaml"), fmt.Sprintf(`apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
spec:
  mcp_servers:
    - name: codegen
      url: %s
      transport: streamable_http
      headers:
        Authorization: %q
`, sb.URL, sb.Headers["Authorization"]))
	model := newScriptedModel(call(tool("Bash", map[string]any{"command": "echo over streamable http"})), say("done"))
	conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(cfg), sdk.WithProvider(model))
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	if _, err := conv.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	r, err := resultOf(model.Results(), "Bash")
	if err != nil || !strings.Contains(r.Text, "over streamable http") || r.Error != "" {
		t.Fatalf("Bash over Streamable HTTP: %+v, %v", r, err)
	}
}
