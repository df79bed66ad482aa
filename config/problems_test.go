package config

import (
	"errors"
	"strings"
	"testing"
)

// problemCases are files with exactly one thing wrong, and the full
// message each must produce. They also seed FuzzParse.
var problemCases = []struct {
	name, yaml, want string
}{
	// The document.
	{"syntax error", "spec:\n  hooks: [\n", `runtime.yaml:2: did not find expected node content`},
	{"syntax error on line 1", "spec: x: y\n", `runtime.yaml: mapping values are not allowed in this context`},
	{"empty file", "", `runtime.yaml: file is empty`},
	{"only comments", "# nothing here\n", `runtime.yaml: file is empty`},
	{"top level list", "- a\n- b\n", `runtime.yaml:1:1: top level must be a mapping, got a list`},
	{"top level scalar", "hello\n", `runtime.yaml:1:1: top level must be a mapping, got a string`},
	{"spec missing", "kind: RuntimeConfig\n", `runtime.yaml:1:1: missing required key "spec"`},
	{"spec not a mapping", "kind: RuntimeConfig\nspec: [a]\n", `runtime.yaml:2:7: spec: must be a mapping, got a list`},
	{"spec null", "spec:\n", `runtime.yaml:1:6: spec: must be a mapping, got null`},
	{"a Kubernetes Pod", "apiVersion: v1\nkind: Pod\nspec: {}\n",
		"runtime.yaml:1:13: apiVersion: must be \"promptkit.altairalabs.ai/v1alpha1\" (a PromptKit RuntimeConfig), got \"v1\"\n" +
			`runtime.yaml:2:7: kind: must be "RuntimeConfig" (a PromptKit RuntimeConfig), got "Pod"`},
	{"another PromptKit kind", "apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: Arena\nspec: {}\n",
		`runtime.yaml:2:7: kind: must be "RuntimeConfig" (a PromptKit RuntimeConfig), got "Arena"`},
	{"kind a list", "kind: [RuntimeConfig]\nspec: {}\n",
		`runtime.yaml:1:7: kind: must be "RuntimeConfig" (a PromptKit RuntimeConfig), got a list`},
	{"binary tag", "spec:\n  sandboxes:\n    s:\n      mode: !!binary ZGlyZWN0\n",
		"runtime.yaml:4:13: spec.sandboxes.s.mode: YAML tag !!binary is not supported: write the value without it\n" +
			`runtime.yaml:4:13: spec.sandboxes.s: unknown sandbox mode "ZGlyZWN0" (known modes: direct, docker_run, kubectl_exec)`},
	{"second document", "spec: {}\n---\nspec: {}\n", `runtime.yaml:2:1: a RuntimeConfig is a single YAML document; found a second one`},
	{"invalid utf-8", "spec:\n  hooks: \xff\n", `runtime.yaml:2:10: invalid UTF-8 (byte 0xFF)`},
	{"control character", "spec:\n  x: \"a\x01\"\n", `runtime.yaml:2:8: control character U+0001 is not allowed`},
	{"sandboxes not a mapping", "spec:\n  sandboxes: [a]\n", `runtime.yaml:2:14: spec.sandboxes: must be a mapping of sandbox names to sandboxes, got a list`},
	{"hooks not a mapping", "spec:\n  hooks: foo\n", `runtime.yaml:2:10: spec.hooks: must be a mapping of hook names to hooks, got a string`},
	{"key not a string", "spec:\n  hooks:\n    ? [a]\n    : b\n", `runtime.yaml:3:7: spec.hooks: keys must be strings, got a list`},
	{"bad merge", "spec:\n  hooks:\n    <<: 1\n", `runtime.yaml:3:9: spec.hooks: merge key "<<" takes a mapping or a list of mappings, got an integer`},

	// Duplicates, anywhere.
	{"duplicate top-level key", "spec: {}\nspec: {}\n", `runtime.yaml:2:1: duplicate key "spec" (first defined at line 1)`},
	{"duplicate key in ignored section", "metadata:\n  name: a\n  name: b\nspec: {}\n", `runtime.yaml:3:3: metadata: duplicate key "name" (first defined at line 2)`},
	{"duplicate hook", "spec:\n  hooks:\n    h: {command: a, hook: eval}\n    h: {command: b, hook: eval}\n", `runtime.yaml:4:5: spec.hooks: duplicate key "h" (first defined at line 3)`},
	{"duplicate key in hook", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      command: b\n", `runtime.yaml:6:7: spec.hooks.h: duplicate key "command" (first defined at line 4)`},

	// Entries.
	{"null hook entry", "spec:\n  hooks: { foo: }\n", `runtime.yaml:2:12: spec.hooks.foo: entry is empty`},
	{"null sandbox entry", "spec:\n  sandboxes:\n    foo: null\n", `runtime.yaml:3:5: spec.sandboxes.foo: entry is empty`},
	{"entry not a mapping", "spec:\n  hooks:\n    foo: bar\n", `runtime.yaml:3:10: spec.hooks.foo: entry must be a mapping, got a string`},
	{"empty hook name", "spec:\n  hooks:\n    \"\": {command: a, hook: eval}\n", `runtime.yaml:3:5: spec.hooks: hook name is empty`},

	// Sandboxes.
	{"sandbox without mode", "spec:\n  sandboxes:\n    box:\n      image: x\n", `runtime.yaml:3:5: spec.sandboxes.box: missing required key "mode"`},
	{"unknown mode", "spec:\n  sandboxes:\n    box:\n      mode: dockr_run\n", `runtime.yaml:4:13: spec.sandboxes.box: unknown sandbox mode "dockr_run" (known modes: direct, docker_run, kubectl_exec)`},
	{"mode not a string", "spec:\n  sandboxes:\n    box:\n      mode: [docker_run]\n", `runtime.yaml:4:13: spec.sandboxes.box: key "mode" must be a string, got a list`},
	{"mode empty", "spec:\n  sandboxes:\n    box:\n      mode: \"\"\n", `runtime.yaml:4:13: spec.sandboxes.box: key "mode" is empty`},
	{"version not a string", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      version: {min: 1}\n", `runtime.yaml:5:16: spec.sandboxes.box: key "version" must be a string, got a mapping`},
	{"open_timeout not a duration", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      open_timeout: 30\n", `runtime.yaml:5:21: spec.sandboxes.box: key "open_timeout" must be a positive duration such as "30s", got "30"`},
	{"open_timeout negative", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      open_timeout: -1s\n", `runtime.yaml:5:21: spec.sandboxes.box: key "open_timeout" must be a positive duration such as "30s", got "-1s"`},
	{"plugin not a string", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      plugin: [docker]\n", `runtime.yaml:5:15: spec.sandboxes.box: key "plugin" must be a string, got a list`},
	{"sandbox named direct", "spec:\n  sandboxes:\n    direct:\n      mode: direct\n", `runtime.yaml:3:5: spec.sandboxes.direct: the name "direct" is reserved for the built-in sandbox; choose another name`},
	{"unset variable", "spec:\n  sandboxes:\n    box:\n      mode: kubectl_exec\n      pod: ${POD}\n", `runtime.yaml:5:12: spec.sandboxes.box: environment variable POD is not set (used in key "pod")`},
	{"unset variable in list", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      mounts: [a, \"${HOOKS}:/hooks\"]\n", `runtime.yaml:5:19: spec.sandboxes.box: environment variable HOOKS is not set (used in key "mounts[1]")`},
	{"unset variable in nested map", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      labels:\n        app: x-${APP}\n", `runtime.yaml:6:14: spec.sandboxes.box: environment variable APP is not set (used in key "labels.app")`},
	{"unterminated reference", "spec:\n  sandboxes:\n    box:\n      mode: kubectl_exec\n      pod: ${POD_NAME\n", `runtime.yaml:5:12: spec.sandboxes.box: unterminated "${" in key "pod" (write "$${" for a literal "${")`},
	{"empty reference", "spec:\n  sandboxes:\n    box:\n      mode: kubectl_exec\n      pod: a${}\n", `runtime.yaml:5:12: spec.sandboxes.box: empty variable name "${}" in key "pod"`},
	{"invalid variable name", "spec:\n  sandboxes:\n    box:\n      mode: kubectl_exec\n      pod: ${POD-NAME}\n", `runtime.yaml:5:12: spec.sandboxes.box: invalid variable name "POD-NAME" in key "pod" (use letters, digits and underscores, not starting with a digit)`},
	{"infinite number", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      cpus: .inf\n", `runtime.yaml:5:13: spec.sandboxes.box: key "cpus": .inf is not a finite number`},
	{"integer out of range", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      memory: !!int 99999999999999999999\n",
		"runtime.yaml:5:15: spec.sandboxes.box.memory: YAML tag !!int is not supported: write the value without it\n" +
			`runtime.yaml:5:15: spec.sandboxes.box: key "memory": invalid or out-of-range integer "99999999999999999999"`},
	{"anchor containing itself", "spec:\n  sandboxes:\n    box:\n      mode: docker_run\n      extra_args: &a [x, *a]\n", `runtime.yaml:5:26: spec.sandboxes.box: alias *a in key "extra_args[1]" refers to a value that contains it`},

	// Hooks.
	{"missing command", "spec:\n  hooks:\n    h:\n      hook: eval\n", `runtime.yaml:3:5: spec.hooks.h: missing required key "command"`},
	{"empty command", "spec:\n  hooks:\n    h:\n      command: \"\"\n      hook: eval\n", `runtime.yaml:4:16: spec.hooks.h: key "command" is empty`},
	{"command not a string", "spec:\n  hooks:\n    h:\n      command: [a]\n      hook: eval\n", `runtime.yaml:4:16: spec.hooks.h: key "command" must be a string, got a list`},
	{"NUL in command", "spec:\n  hooks:\n    h:\n      command: \"a\\0b\"\n      hook: eval\n", `runtime.yaml:4:16: spec.hooks.h: key "command" contains a NUL byte`},
	{"missing hook type", "spec:\n  hooks:\n    h:\n      command: a\n", `runtime.yaml:3:5: spec.hooks.h: missing required key "hook"`},
	{"unknown hook type", "spec:\n  hooks:\n    h:\n      command: a\n      hook: providr\n      phases: [before_call]\n", `runtime.yaml:5:13: spec.hooks.h: unknown hook type "providr" (valid: provider, tool, session, eval)`},
	{"missing phases", "spec:\n  hooks:\n    h:\n      command: a\n      hook: provider\n", `runtime.yaml:3:5: spec.hooks.h: missing required key "phases" (valid: before_call, after_call)`},
	{"empty phases", "spec:\n  hooks:\n    h:\n      command: a\n      hook: session\n      phases: []\n", `runtime.yaml:6:15: spec.hooks.h: key "phases" is empty (valid: session_start, session_update, session_end)`},
	{"phase of another type", "spec:\n  hooks:\n    h:\n      command: a\n      hook: provider\n      phases: [before_call, before_execution]\n", `runtime.yaml:6:29: spec.hooks.h: phase "before_execution" is not a provider phase (valid: before_call, after_call)`},
	{"phase listed twice", "spec:\n  hooks:\n    h:\n      command: a\n      hook: tool\n      phases: [after_execution, after_execution]\n", `runtime.yaml:6:33: spec.hooks.h: phase "after_execution" is listed twice`},
	{"phases on eval hook", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      phases: [before_call]\n", `runtime.yaml:6:7: spec.hooks.h: eval hooks have no phases`},
	{"phases not a list", "spec:\n  hooks:\n    h:\n      command: a\n      hook: provider\n      phases: before_call\n", `runtime.yaml:6:15: spec.hooks.h: key "phases" must be a list of strings, got a string`},
	{"unknown mode", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      mode: async\n", `runtime.yaml:6:13: spec.hooks.h: unknown mode "async" (valid: filter, observe)`},
	{"filter mode on eval hook", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      mode: filter\n", `runtime.yaml:6:13: spec.hooks.h: eval hooks always run in observe mode; mode "filter" is not allowed`},
	{"zero timeout", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: 0\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" must be a positive integer (milliseconds), got 0`},
	{"negative timeout", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: -5\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" must be a positive integer (milliseconds), got -5`},
	{"timeout as duration string", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: 3s\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" must be a positive integer (milliseconds), got "3s"`},
	{"fractional timeout", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: 1.5\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" must be a positive integer (milliseconds), got 1.5`},
	{"quoted timeout", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: \"3000\"\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" must be a positive integer (milliseconds), got "3000"`},
	{"huge timeout", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      timeout_ms: 9223372036854775807\n", `runtime.yaml:6:19: spec.hooks.h: key "timeout_ms" is too large (at most 9223372036854 milliseconds)`},
	{"args not a list", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      args: {a: b}\n", `runtime.yaml:6:13: spec.hooks.h: key "args" must be a list of strings, got a mapping`},
	{"args item not a string", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      args: [-v, [x]]\n", `runtime.yaml:6:18: spec.hooks.h: args[1] must be a string, got a list`},
	{"args item null", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      args: [-v, ~]\n", `runtime.yaml:6:18: spec.hooks.h: args[1] must be a string, got null`},
	{"env not a list", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      env: LOG_LEVEL=info\n", `runtime.yaml:6:12: spec.hooks.h: key "env" must be a list of strings, got a string`},
	{"env empty name", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      env: [A, =info]\n", `runtime.yaml:6:16: spec.hooks.h: env[1] "=info" has an empty variable name`},
	{"env invalid name", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      env: [LOG-LEVEL=info]\n", `runtime.yaml:6:13: spec.hooks.h: env[0] "LOG-LEVEL=info" has an invalid variable name "LOG-LEVEL" (use letters, digits and underscores, not starting with a digit)`},
	{"undeclared sandbox", "spec:\n  sandboxes:\n    pii_runner: {mode: docker_run}\n    sidecar: {mode: kubectl_exec}\n  hooks:\n    h:\n      command: a\n      hook: eval\n      sandbox: pii\n", `runtime.yaml:9:16: spec.hooks.h: sandbox "pii" is not declared in spec.sandboxes (declared: pii_runner, sidecar)`},
	{"undeclared sandbox, none declared", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      sandbox: pii\n", `runtime.yaml:6:16: spec.hooks.h: sandbox "pii" is not declared in spec.sandboxes (declared: none)`},
	{"unknown key with suggestion", "spec:\n  hooks:\n    h:\n      command: a\n      hook: provider\n      phase: [before_call]\n      phases: [before_call]\n", `runtime.yaml:6:7: spec.hooks.h: unknown key "phase" (did you mean "phases"?)`},
	{"unknown key", "spec:\n  hooks:\n    h:\n      command: a\n      hook: eval\n      image: x\n", `runtime.yaml:6:7: spec.hooks.h: unknown key "image" (valid keys: args, command, env, hook, mode, phases, sandbox, timeout_ms)`},

	// Plugins.
	{"plugins not a mapping", "spec:\n  plugins: [./plugins]\n", `runtime.yaml:2:12: spec.plugins: must be a mapping, got a list`},
	{"plugins unknown key", "spec:\n  plugins:\n    dir: [./plugins]\n", `runtime.yaml:3:5: spec.plugins: unknown key "dir" (did you mean "dirs"?)`},
	{"plugin dirs not a list", "spec:\n  plugins:\n    dirs: ./plugins\n", `runtime.yaml:3:11: spec.plugins: key "dirs" must be a list of strings, got a string`},
	{"plugin dir empty", "spec:\n  plugins:\n    dirs: [./a, \"\"]\n", `runtime.yaml:3:17: spec.plugins: dirs[1] is empty`},
}

func TestProblems(t *testing.T) {
	for _, tc := range problemCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("runtime.yaml", []byte(tc.yaml), testOptions(t))
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want error:\n%s", f, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, want *Error: %v", err, err)
			}
			if f != nil {
				t.Errorf("Parse returned a File along with the error")
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("yaml:\n%s\ngot:  %s\nwant: %s", indent(tc.yaml), got, tc.want)
			}
		})
	}
}

func indent(s string) string {
	return "  | " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  | ")
}
