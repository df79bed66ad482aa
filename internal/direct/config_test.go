package direct

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want shell.Options
	}{
		{"empty", map[string]any{}, shell.Options{}},
		{"everything", map[string]any{
			"timeout": "3s", "kill_grace": 100, "output_limit": 1024, "clean_env": true, "workdir": dir,
		}, shell.Options{Timeout: 3 * time.Second, KillGrace: 100 * time.Millisecond, OutputLimit: 1024, CleanEnv: true, Dir: dir}},
		{"zero grace kills at once", map[string]any{"kill_grace": "0s"}, shell.Options{KillGrace: -1}},
		{"empty YAML values are absent", map[string]any{"timeout": nil, "kill_grace": nil}, shell.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.cfg)
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if got != tc.want {
				t.Errorf("options = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFactoryRejectsBadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"unknown key", map[string]any{"image": "x"}, `config: unknown key "image"`},
		{"typo", map[string]any{"timout": "1s"}, `config: unknown key "timout"`},
		{"timeout not a duration", map[string]any{"timeout": "soon"}, `config: key "timeout": invalid duration "soon"`},
		{"timeout wrong type", map[string]any{"timeout": true}, `config: key "timeout": invalid duration true`},
		{"timeout negative", map[string]any{"timeout": "-1s"}, `config: key "timeout": invalid duration "-1s": negative`},
		{"timeout zero", map[string]any{"timeout": 0}, `config: key "timeout": must be greater than zero`},
		{"kill_grace fractional ms", map[string]any{"kill_grace": 1.5}, `config: key "kill_grace": invalid duration 1.5`},
		{"output_limit zero", map[string]any{"output_limit": 0}, `config: key "output_limit": must be a positive number of bytes, got 0`},
		{"output_limit negative", map[string]any{"output_limit": -5}, `config: key "output_limit": must be a positive number of bytes, got -5`},
		{"output_limit string", map[string]any{"output_limit": "16MiB"}, `config: key "output_limit": expected an integer, got string`},
		{"output_limit fraction", map[string]any{"output_limit": 1.5}, `config: key "output_limit": expected an integer, got number 1.5`},
		{"clean_env not bool", map[string]any{"clean_env": "yes"}, `config: key "clean_env": expected true or false, got string`},
		{"workdir not string", map[string]any{"workdir": 3}, `config: key "workdir": expected a string, got number`},
		{"workdir missing", map[string]any{"workdir": file + "-nope"}, `config: key "workdir": stat ` + file + `-nope: no such file or directory`},
		{"workdir is a file", map[string]any{"workdir": file}, `config: key "workdir": ` + file + ` is not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := Factory(context.Background(), "hooks", tc.cfg)
			if err == nil {
				t.Fatalf("Factory = %v, want an error", sb)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to start with %q", err, tc.want)
			}
		})
	}
}

func TestRegistryOpenNamesSandboxOnBadConfig(t *testing.T) {
	r := sandbox.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	_, err := r.Open(context.Background(), "pii", ModeName, map[string]any{"bogus": 1})
	want := `open sandbox "pii" (mode direct): config: unknown key "bogus"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
