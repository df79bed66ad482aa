package config

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestSandboxFromEntryResolvesAsLoadDoes(t *testing.T) {
	env := map[string]string{"IMAGE": "hooks:1", "POOL": "pool-a"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	entry := map[string]any{
		"mode":         "docker_run",
		"version":      "~> 1.0",
		"plugin":       "docker",
		"open_timeout": "45s",
		"image":        "${IMAGE}",
		"mounts":       []any{"./hooks:/hooks:ro", "named:/data", "/abs:/abs"},
		"docker_path":  "bin/docker",
		"labels":       map[string]any{"pool": "${POOL}", "literal": "$${KEEP}"},
		"pool":         1,
	}
	sb, err := SandboxFromEntry("runner", "docker_run", entry, EntryOptions{Dir: "/etc/pk", LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	want := Sandbox{
		Name: "runner", Mode: "docker_run", Version: "~> 1.0", Plugin: "docker", OpenTimeout: 45 * time.Second,
		Config: map[string]any{
			"image":       "hooks:1",
			"mounts":      []any{"/etc/pk/hooks:/hooks:ro", "named:/data", "/abs:/abs"},
			"docker_path": "/etc/pk/bin/docker",
			"labels":      map[string]any{"pool": "pool-a", "literal": "${KEEP}"},
			"pool":        1,
		},
	}
	if !reflect.DeepEqual(sb, want) {
		t.Fatalf("got  %#v\nwant %#v", sb, want)
	}
	if entry["image"] != "${IMAGE}" {
		t.Errorf("the caller's entry was changed: image = %v", entry["image"])
	}
}

func TestSandboxFromEntryReportsEveryProblem(t *testing.T) {
	entry := map[string]any{
		"mode":         "docker_exec",
		"open_timeout": "soon",
		"version":      3,
		"container":    "${MISSING}",
		"extra_args":   []any{"${}"},
		"odd":          map[any]any{1: 2},
	}
	_, err := SandboxFromEntry("side", "docker_run", entry, EntryOptions{Dir: "/", LookupEnv: func(string) (string, bool) { return "", false }})
	var ee *EntryError
	if !errors.As(err, &ee) || !errors.Is(err, ErrEntry) {
		t.Fatalf("err = %v; want an *EntryError", err)
	}
	want := []string{
		`environment variable MISSING is not set (used in key "container")`,
		`empty variable name "${}" in key "extra_args[0]"`,
		`key "mode" is docker_exec, but the sandbox is opened for mode "docker_run"`,
		`key "odd": unsupported value of type map[interface {}]interface {}`,
		`key "open_timeout" must be a positive duration such as "30s", got "soon"`,
		`key "version" must be a string, got int`,
	}
	if !reflect.DeepEqual(ee.Problems, want) {
		t.Fatalf("problems:\n%q\nwant\n%q", ee.Problems, want)
	}
}
