package promptkit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/runtime/providers/mock"
	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// codegenPack is the pack a PromptKit user writes for a coding agent:
// the codegen server's tools are offered by the wildcard.
const codegenPack = `{
  "id": "codegen-test",
  "name": "Codegen test",
  "version": "1.0.0",
  "template_engine": {"version": "v1", "syntax": "{{variable}}"},
  "prompts": {
    "code": {"id": "code", "name": "Code", "version": "1.0.0",
      "system_template": "You are a coding agent.",
      "tools": ["mcp__codegen__*"]}
  }
}
`

// sandboxdUID owns a workspace the image's user writes in.
const sandboxdUID = 65532

// realImage is the sandboxd image for Go, as make sandboxd-image builds
// it, built here when the engine lacks it (minutes, once).
func realImage(t testing.TB) string {
	t.Helper()
	dockertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{ModuleDir: filepath.Dir(wd)})
	if err != nil {
		t.Fatal(err)
	}
	return img.Ref
}

// codegenEnv is a RuntimeConfig declaring a docker_codegen sandbox
// under a name of the test's own, a pack, and a workspace the image's
// user can write.
type codegenEnv struct {
	base, cfg, pack, workspace, sandbox string
}

func newCodegenEnv(t testing.TB, extra string) codegenEnv {
	t.Helper()
	image := realImage(t)
	base := t.TempDir()
	e := codegenEnv{base: base, sandbox: "cg_" + randomHex(t), workspace: filepath.Join(base, "repo")}
	if err := os.Mkdir(e.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(e.workspace, sandboxdUID, sandboxdUID); err != nil {
		t.Fatal(err)
	}
	e.cfg = writeFile(t, filepath.Join(base, "runtime.yaml"), fmt.Sprintf(`apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
spec:
  sandboxes:
    %s:
      mode: docker_codegen
      image: %s
      network: none
      cache: none
%s`, e.sandbox, image, indent(extra, 6)))
	e.pack = writeFile(t, filepath.Join(base, "agent.pack.json"), codegenPack)
	dockertest.Cleanup(t, "org.promptkit.sandbox.name="+e.sandbox)
	return e
}

// containers counts the running containers of the env's sandbox.
func (e codegenEnv) containers(t testing.TB) int {
	t.Helper()
	out := strings.Fields(dockertest.Docker(t, "ps", "-q", "--filter", "label=org.promptkit.sandbox.name="+e.sandbox))
	return len(out)
}

const (
	calcGo     = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	calcTestGo = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d\", got)\n\t}\n}\n"
)

// TestSDKCodegenAgentOnDocker: PromptKit's own agent loop (sdk.Open, its
// mock provider scripting tool calls) drives a docker_codegen sandbox
// resolved by MCPServer, with no other glue: it writes a Go module, runs
// its tests (pass), edits them to fail (fail), reads, greps, globs, runs
// a background shell and reads it, and renders a diagram. The model
// receives each tool's text; the files land in the workspace; the
// sandbox is gone once the conversation closes.
func TestSDKCodegenAgentOnDocker(t *testing.T) {
	env := newCodegenEnv(t, "")
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	model := newScriptedModel(agentScript()...)
	conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(model),
		a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox, Workspace: env.workspace}))
	if err != nil {
		t.Fatalf("sdk.Open: %v (last resolve error: %v)", err, a.LastCodegenError())
	}
	if n := env.containers(t); n != 1 {
		t.Errorf("%d containers of the sandbox after Open; want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := conv.Send(ctx, "write calc, test it, break it")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.Text() != "done" {
		t.Errorf("final answer %q; want done", resp.Text())
	}
	checkAgentResults(t, model.Results())
	for name, want := range map[string]string{"go.mod": "module example.com/calc\n\ngo 1.21\n", "calc.go": strings.Replace(calcGo, "a + b", "a - b", 1), "calc_test.go": calcTestGo} {
		if b, err := os.ReadFile(filepath.Join(env.workspace, name)); err != nil || string(b) != want {
			t.Errorf("workspace %s = %q, %v; want %q", name, b, err, want)
		}
	}
	if err := conv.Close(); err != nil {
		t.Errorf("conv.Close: %v", err)
	}
	waitContainers(t, env, 0)
	if got := a.Stats().Codegens; got != 1 {
		t.Errorf("Stats().Codegens = %d; want 1", got)
	}
}

// agentScript is the model's side of TestSDKCodegenAgentOnDocker.
func agentScript() []step {
	var bashID string
	return []step{
		call(tool("Write", map[string]any{"file_path": "go.mod", "content": "module example.com/calc\n\ngo 1.21\n"}),
			tool("Write", map[string]any{"file_path": "calc.go", "content": calcGo}),
			tool("Write", map[string]any{"file_path": "calc_test.go", "content": calcTestGo})),
		call(tool("run_tests", map[string]any{})),
		call(tool("Read", map[string]any{"file_path": "calc.go"})),
		call(tool("Edit", map[string]any{"file_path": "calc.go", "old_string": "a + b", "new_string": "a - b"})),
		call(tool("run_tests", map[string]any{})),
		call(tool("Grep", map[string]any{"pattern": "func Add", "output_mode": "files_with_matches"}),
			tool("Glob", map[string]any{"pattern": "**/*.go"})),
		call(tool("Bash", map[string]any{"command": "echo started; sleep 1; echo finished", "run_in_background": true})),
		func(rs []toolResult) *mock.Turn {
			id := "missing"
			if len(rs) == 1 {
				if f := strings.Fields(rs[0].Text); len(f) > 0 {
					id = f[len(f)-1]
				}
			}
			bashID = id
			return &mock.Turn{Type: "tool_calls", ToolCalls: []mock.ToolCall{tool("Bash", map[string]any{"command": "sleep 2"})}}
		},
		func([]toolResult) *mock.Turn {
			return &mock.Turn{Type: "tool_calls", ToolCalls: []mock.ToolCall{tool("BashOutput", map[string]any{"bash_id": bashID})}}
		},
		call(tool("render_diagram", map[string]any{"language": "dot", "source": "digraph { agent -> sandbox }", "format": "svg", "output_path": "docs/flow.svg"})),
		say("done"),
	}
}

// checkAgentResults asserts what the model received from each call.
func checkAgentResults(t *testing.T, rs []toolResult) {
	t.Helper()
	for _, r := range rs {
		if r.Error != "" {
			t.Errorf("tool %s failed: %s (%s)", r.Name, r.Error, r.Text)
		}
	}
	var tests []toolResult
	for _, r := range rs {
		if r.Name == "mcp__codegen__run_tests" {
			tests = append(tests, r)
		}
	}
	if len(tests) != 2 {
		t.Fatalf("%d run_tests results; want 2: %+v", len(tests), rs)
	}
	if !strings.Contains(tests[0].Text, "1 passed") || strings.Contains(tests[0].Text, "1 failed") {
		t.Errorf("first run_tests (good code):\n%s", tests[0].Text)
	}
	if !strings.Contains(tests[1].Text, "1 failed") || !strings.Contains(tests[1].Text, "test:TestAdd") {
		t.Errorf("second run_tests (broken code):\n%s", tests[1].Text)
	}
	expect := map[string][]string{
		"Read":           {"return a + b"},
		"Grep":           {"calc.go"},
		"Glob":           {"calc.go", "calc_test.go"},
		"BashOutput":     {"started", "finished"},
		"render_diagram": {"docs/flow.svg"},
	}
	for name, wants := range expect {
		r, err := resultOf(rs, name)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s result lacks %q:\n%s", name, w, r.Text)
			}
		}
	}
}

// waitContainers waits until the env's sandbox has n containers.
func waitContainers(t testing.TB, env codegenEnv, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := env.containers(t)
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d containers of the sandbox; want %d", got, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
