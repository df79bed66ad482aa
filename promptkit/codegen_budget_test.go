package promptkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/runtime/providers/mock"
	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// TestSDKCodegenLongBashKeepsTheTurn: PromptKit cancels an MCP tool call
// at 30 s. A 40 s Bash in a sandbox with sandboxd's default call budget
// (25 s) answers within it with what it has so far and a handle; the
// turn goes on, and the agent reads the rest through BashOutput once
// the command has ended. Nothing is lost: the output of both halves and
// the exit status reach the model.
func TestSDKCodegenLongBashKeepsTheTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: a 40 s command (make test runs it)")
	}
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	var shell string
	model := newScriptedModel(
		call(tool("Bash", map[string]any{"command": "echo first half; sleep 40; echo second half", "timeout": 120000})),
		func(rs []toolResult) *mock.Turn {
			// The handle, as the partial answer names it for BashOutput.
			if len(rs) == 1 {
				if _, after, ok := strings.Cut(rs[0].Text, `bash_id "`); ok {
					shell, _, _ = strings.Cut(after, `"`)
				}
			}
			return &mock.Turn{Type: "tool_calls", ToolCalls: []mock.ToolCall{tool("Bash", map[string]any{"command": "sleep 20"})}}
		},
		func([]toolResult) *mock.Turn {
			return &mock.Turn{Type: "tool_calls", ToolCalls: []mock.ToolCall{tool("BashOutput", map[string]any{"bash_id": shell})}}
		},
		say("done"),
	)
	conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(model),
		a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox}))
	if err != nil {
		t.Fatalf("sdk.Open: %v (%v)", err, a.LastCodegenError())
	}
	defer conv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	resp, err := conv.Send(ctx, "run the long job")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.Text() != "done" {
		t.Errorf("final answer %q", resp.Text())
	}
	rs := model.Results()
	if len(rs) != 3 {
		t.Fatalf("%d tool results; want 3: %+v", len(rs), rs)
	}
	first, rest := rs[0], rs[2]
	if first.Error != "" || !strings.Contains(first.Text, "first half") || strings.Contains(first.Text, "second half") || shell == "" {
		t.Errorf("the 40 s Bash answered (handle %q):\n%s\nerror: %s", shell, first.Text, first.Error)
	}
	if rest.Error != "" || !strings.Contains(rest.Text, "second half") || !strings.Contains(rest.Text, "exit") {
		t.Errorf("BashOutput of %s after the command ended:\n%s\nerror: %s", shell, rest.Text, rest.Error)
	}
}
