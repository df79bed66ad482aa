package arena_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// kit is an arena config the tests run: one prompt, the mock provider,
// and an MCP server from source, opened once per session, that every
// session's assertions run their tools on.
type kit struct {
	source     string
	sourceArgs map[string]any
	scenarios  []session
}

// session is a scenario, run once: the mock model writes files through
// the sandbox's Write tool, then says it is done.
type session struct {
	name      string
	variables map[string]string // spec.variables, which source_args templates expand from
	files     map[string]string // what the model writes, by path in the workspace
	// assertions are the scenario's conversation assertions, after the
	// kit's global one.
	assertions []map[string]any
}

// testsPass is the kit's global conversation assertion: the session's
// tests, run in its sandbox, pass. tool_exec fails on a tool error only,
// and sandboxd's run_tests reports failing tests in a normal result, so
// the gate is its summary line: a report with no findings whose go test
// exited 0.
var testsPass = map[string]any{
	"type":    "tool_exec",
	"message": "the session's tests pass",
	"params": map[string]any{
		"tool":            "run_tests",
		"args":            map[string]any{"timeout": 120000},
		"timeout_seconds": 120,
		"success_pattern": `^no findings; go test exited 0 `,
	},
}

// only checks, through the sandbox's Bash tool, that its workspace
// holds exactly the named files.
func only(names ...string) map[string]any {
	list := strings.Join(slices.Sorted(slices.Values(names)), " ")
	return map[string]any{
		"type":    "tool_exec",
		"message": "the workspace holds only this session's files",
		"params": map[string]any{
			"tool":            "Bash",
			"args":            map[string]any{"command": `test "$(LC_ALL=C ls -A | tr '\n' ' ')" = '` + list + ` ' && echo ONLY-OWN-FILES`},
			"success_pattern": "ONLY-OWN-FILES",
		},
	}
}

// write lays the kit out in dir and returns the arena config's path.
func (k kit) write(t *testing.T, dir string) string {
	t.Helper()
	put := func(name string, doc any) {
		t.Helper()
		b, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := func(kind, name string) map[string]any {
		return map[string]any{"apiVersion": "promptkit.altairalabs.ai/v1alpha1", "kind": kind, "metadata": map[string]any{"name": name}}
	}

	prompt := head("PromptConfig", "coder")
	prompt["spec"] = map[string]any{
		"task_type": "coder", "version": "v1.0.0", "description": "Writes Go in a sandbox.",
		"system_template": "You write Go code in the sandbox's workspace.",
		"allowed_tools":   []string{"Write", "Read", "Bash", "run_tests"},
	}
	put("prompts/coder.yaml", prompt)

	provider := head("Provider", "mock")
	provider["spec"] = map[string]any{"id": "mock", "type": "mock", "model": "mock",
		"additional_config": map[string]any{"mock_config": "mock-responses.yaml"}}
	put("providers/mock.yaml", provider)

	// The mock model's replies, keyed by the scenario's metadata.name and
	// numbered by its calls: first every Write at once, then, with their
	// results, a last word.
	responses := map[string]any{}
	var scenarioRefs []map[string]any
	for _, s := range k.scenarios {
		var calls []map[string]any
		for _, path := range slices.Sorted(maps.Keys(s.files)) {
			calls = append(calls, map[string]any{"name": "Write", "arguments": map[string]any{"file_path": path, "content": s.files[path]}})
		}
		responses[s.name] = map[string]any{"turns": map[int]any{
			1: map[string]any{"content": "Writing the package and its test.", "tool_calls": calls},
			2: "Done.",
		}}
		sc := head("Scenario", s.name)
		spec := map[string]any{
			"id": s.name, "task_type": "coder", "description": "The model writes " + s.name + "'s files.",
			"turns": []map[string]any{{"role": "user", "content": "Write a Go package with a test."}},
		}
		if len(s.variables) > 0 {
			spec["variables"] = s.variables
		}
		if len(s.assertions) > 0 {
			spec["conversation_assertions"] = s.assertions
		}
		sc["spec"] = spec
		file := "scenarios/" + s.name + ".scenario.yaml"
		put(file, sc)
		scenarioRefs = append(scenarioRefs, map[string]any{"file": file})
	}
	put("mock-responses.yaml", map[string]any{"scenarios": responses})

	cfg := head("Arena", "promptkit-sandbox-arena-test")
	cfg["spec"] = map[string]any{
		"prompt_configs": []map[string]any{{"id": "coder", "file": "prompts/coder.yaml"}},
		"providers":      []map[string]any{{"file": "providers/mock.yaml"}},
		"scenarios":      scenarioRefs,
		"mcp_servers": []map[string]any{{
			"name": "sandbox", "source": k.source, "scope": "session", "source_args": k.sourceArgs,
		}},
		"globals":  map[string]any{"conversation_assertions": []map[string]any{testsPass}},
		"defaults": map[string]any{"output": map[string]any{"dir": filepath.Join(dir, "out"), "formats": []string{"json"}}},
	}
	put("arena.yaml", cfg)
	return filepath.Join(dir, "arena.yaml")
}
