package dockerbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Validation happens before the engine is asked anything, so these need
// no engine.
func TestConfigErrors(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent.sock")
	cases := []struct {
		name string
		run  bool
		cfg  map[string]any
		want string
	}{
		{"unknown key", true, map[string]any{"image": "x", "imgae": "y"}, `config: unknown key "imgae"`},
		{"image missing", true, map[string]any{"network": "none"}, `config: key "image" is required`},
		{"image empty", true, map[string]any{"image": " "}, `config: key "image" is required`},
		{"bad memory", true, map[string]any{"image": "x", "memory": "lots"}, `config: key "memory": invalid size "lots"`},
		{"tiny memory", true, map[string]any{"image": "x", "memory": "1k"}, `config: key "memory": size "1k" out of range`},
		{"bad cpus", true, map[string]any{"image": "x", "cpus": "-1"}, `config: key "cpus": number of CPUs "-1" out of range`},
		{"bad pids", true, map[string]any{"image": "x", "pids_limit": 0}, `config: key "pids_limit": must be a positive number`},
		{"extra_args on api", true, map[string]any{"image": "x", "extra_args": []any{"--rm"}}, `extra_args needs transport: cli`},
		{"docker_path missing", true, map[string]any{"image": "x", "transport": "cli", "docker_path": "/nonexistent/docker"}, `transport cli: the docker CLI "/nonexistent/docker" was not found`},
		{"unknown transport", true, map[string]any{"image": "x", "transport": "grpc"}, `unknown transport "grpc"`},
		{"negative pool", true, map[string]any{"image": "x", "pool": -1}, `config: key "pool": must be between 0 (no pool) and 64 warm containers, got -1`},
		{"huge pool", true, map[string]any{"image": "x", "pool": 1000}, `config: key "pool": must be between 0 (no pool) and 64 warm containers, got 1000`},
		{"relative mount", true, map[string]any{"image": "x", "mounts": []any{"./hooks:/hooks:ro"}}, `relative host path "./hooks"`},
		{"bad mount option", true, map[string]any{"image": "x", "mounts": []any{"/h:/hooks:rx"}}, `unknown option "rx"`},
		{"relative mount target", true, map[string]any{"image": "x", "mounts": []any{"/h:hooks"}}, `destination "hooks" must be an absolute path`},
		{"bad timeout", true, map[string]any{"image": "x", "timeout": "soon"}, `config: key "timeout": invalid duration "soon"`},
		{"zero timeout", true, map[string]any{"image": "x", "timeout": "0s"}, `config: key "timeout": must be greater than zero`},
		{"bad output limit", true, map[string]any{"image": "x", "output_limit": -5}, `config: key "output_limit": must be a positive number of bytes, got -5`},
		{"wrong type", true, map[string]any{"image": "x", "mounts": "/a:/b"}, `config: key "mounts": expected a list`},
		{"bad env", true, map[string]any{"image": "x", "env": []any{"=v"}}, `config: key "env": entry "=v" has no variable name`},
		{"relative workdir", true, map[string]any{"image": "x", "workdir": "app"}, `config: key "workdir": must be an absolute path`},
		{"container missing", false, map[string]any{"user": "x"}, `config: key "container" is required`},
		{"exec unknown key", false, map[string]any{"container": "c", "image": "x"}, `config: unknown key "image"`},
		{"exec extra_args", false, map[string]any{"container": "c", "extra_args": []any{"-t"}}, `extra_args needs transport: cli`},
		{"bad warm", false, map[string]any{"container": "c", "warm": -1}, `config: key "warm": must be between 0 (none) and 64 warm execs, got -1`},
		{"exec docker_path missing", false, map[string]any{"container": "c", "transport": "cli", "docker_path": "nodocker"}, `transport cli: the docker CLI "nodocker" was not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			factory := ExecFactory
			if c.run {
				factory = RunFactory
			}
			_, err := factory(context.Background(), "sb", c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestConfigDefaultsAndValues(t *testing.T) {
	s, err := parseRunConfig(map[string]any{"image": "img"})
	if err != nil {
		t.Fatal(err)
	}
	if s.network != "none" || s.pidsLimit != 256 || strings.Join(s.capDrop, ",") != "ALL" ||
		strings.Join(s.securityOpt, ",") != "no-new-privileges" || s.timeout != sandbox.DefaultTimeout ||
		s.outputLimit != sandbox.DefaultOutputLimit || s.readOnly || s.memory != 0 || s.nanoCPUs != 0 {
		t.Errorf("defaults: %+v", s)
	}
	t.Setenv("PKS_FWD", "v")
	s, err = parseRunConfig(map[string]any{
		"image": "img", "network": "bridge", "mounts": []any{"/abs:/hooks:ro", "vol:/data"},
		"memory": "256m", "cpus": 0.5, "pids_limit": -1, "read_only": true, "cap_drop": []any{}, "cap_add": []any{"NET_BIND_SERVICE"},
		"security_opt": []any{}, "timeout": 2500, "output_limit": 100, "env": []any{"A=1", "PKS_FWD", "PKS_UNSET_QQ"},
		"transport": "api", "pool": 0, "docker_path": "/usr/bin/docker", "extra_args": []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.network != "bridge" || strings.Join(s.binds, ",") != "/abs:/hooks:ro,vol:/data" || s.memory != 256<<20 ||
		s.nanoCPUs != 5e8 || s.pidsLimit != -1 || !s.readOnly || len(s.capDrop) != 0 || len(s.securityOpt) != 0 ||
		s.timeout != 2500*time.Millisecond || s.outputLimit != 100 || strings.Join(s.env, ",") != "A=1,PKS_FWD=v" {
		t.Errorf("values: %+v", s)
	}
	for in, want := range map[string]int64{"1g": 1 << 30, "6m": 6 << 20, "10485760": 10 << 20, "512M": 512 << 20, "1.5g": 3 << 29} {
		if got, err := parseMemory(in); err != nil || got != want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
