package arena

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParseArgs: every problem is reported at once, sorted, each naming
// its key; relative paths resolve against the working directory; the
// mounts arena adds for skills are accepted.
func TestParseArgs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"nothing", nil, "source_args.config is required: the RuntimeConfig file declaring the sandbox\n" +
			"source_args.sandbox is required: the name of a sandbox of a provider mode (docker_codegen, kubectl_codegen) in that file"},
		{"unknown key", map[string]any{"config": "r.yaml", "sandbox": "code", "imag": "x", "Workspace": "/tmp"},
			`source_args: unknown key "Workspace" (known: config, image, language, plugin_dir, sandbox, workspace)` + "\n" +
				`source_args: unknown key "imag" (known: config, image, language, plugin_dir, sandbox, workspace)`},
		{"wrong types", map[string]any{"config": 3, "sandbox": []any{"code"}, "image": map[string]any{"name": "x"}},
			"source_args.config: want a string, got int 3\n" +
				"source_args.image: want a string, got map[string]interface {} map[name:x]\n" +
				"source_args.sandbox: want a string, got []interface {} [code]"},
		{"empty", map[string]any{"config": " ", "sandbox": "", "language": ""},
			"source_args.config: must not be empty (leave it out instead)\n" +
				"source_args.language: must not be empty (leave it out instead)\n" +
				"source_args.sandbox: must not be empty (leave it out instead)"},
		{"undefined template variable", map[string]any{"config": "r.yaml", "sandbox": "code", "workspace": "/ws/{{scenario.ws}}"},
			`source_args.workspace: "/ws/{{scenario.ws}}" names a template variable the scenario does not define (spec.variables)`},
		{"workspace missing", map[string]any{"config": "r.yaml", "sandbox": "code", "workspace": "/nonexistent/ws"},
			"source_args.workspace: stat /nonexistent/ws: no such file or directory"},
		{"workspace a file", map[string]any{"config": "r.yaml", "sandbox": "code", "workspace": file},
			"source_args.workspace: " + file + " is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseArgs(tc.args)
			if err == nil || err.Error() != tc.want {
				t.Errorf("ParseArgs(%v):\n got %v\nwant %s", tc.args, err, tc.want)
			}
		})
	}

	ws := t.TempDir()
	got, err := ParseArgs(map[string]any{
		"config": "runtime.yaml", "sandbox": " code ", "workspace": ws, "image": "img:1", "language": "go,python",
		"plugin_dir": "plugins", "mounts": []any{map[string]any{"source": "/skills/x", "target": "/skills/x", "readonly": true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Args{Config: filepath.Join(wd, "runtime.yaml"), Sandbox: "code", Workspace: ws, Image: "img:1",
		Language: "go,python", PluginDir: filepath.Join(wd, "plugins")}
	if got != want {
		t.Errorf("ParseArgs = %+v, want %+v", got, want)
	}
}
