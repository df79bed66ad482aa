package dockerbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestCodegenRealImage provisions the real sandboxd image (make
// sandboxd-image; built here if the engine lacks it) on a Go module and
// has an independent MCP client use every kind of tool through the
// endpoint: Read, Write, Edit, Glob, Grep, Bash, run_tests. Inside, the
// agent is the workspace's owner and has no network.
func TestCodegenRealImage(t *testing.T) {
	dockertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	for name, content := range map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.24\n",
		"tiny.go":      "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
	} {
		path := filepath.Join(ws, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 1234, 1234); err != nil {
			t.Fatal(err)
		}
	}
	name := uniqueName(t)
	start := time.Now()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": img.Ref, "workspace": ws}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("provisioned %s in %v (up to its MCP initialize answering)", img.Ref, time.Since(start).Round(time.Millisecond))
	cs := mcptest.Connect(t, got.Endpoint, got.Token)

	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "tiny.go"}); !strings.Contains(out, "return a - b") {
		t.Errorf("Read: %q", out)
	}
	if out := mcptest.CallText(t, cs, "Grep", map[string]any{"pattern": "func Add"}); !strings.Contains(out, "tiny.go") {
		t.Errorf("Grep: %q", out)
	}
	if out := mcptest.CallText(t, cs, "Glob", map[string]any{"pattern": "*_test.go"}); !strings.Contains(out, "tiny_test.go") {
		t.Errorf("Glob: %q", out)
	}
	if out := mcptest.CallText(t, cs, "run_tests", map[string]any{}); !strings.Contains(out, "0 passed, 1 failed") {
		t.Errorf("run_tests before the fix: %q", out)
	}
	mcptest.CallText(t, cs, "Edit", map[string]any{"file_path": "tiny.go", "old_string": "return a - b", "new_string": "return a + b"})
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "NOTES.md", "content": "fixed Add\n"})
	if out := mcptest.CallText(t, cs, "run_tests", map[string]any{}); !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("run_tests after the fix: %q", out)
	}
	out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "id -u; ls /sys/class/net; git init -q && echo git-ok"})
	if fields := strings.Fields(out); len(fields) != 3 || fields[0] != "1234" || fields[1] != "lo" || fields[2] != "git-ok" {
		t.Errorf("Bash (uid, network interfaces, git): %q; want 1234, only lo, git-ok", out)
	}

	if err := p.Release(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if left := containersNamed(t, name); len(left) > 0 {
		t.Errorf("containers left after Release: %v", left)
	}
	b, err := os.ReadFile(filepath.Join(ws, "tiny.go"))
	if err != nil || !strings.Contains(string(b), "return a + b") {
		t.Errorf("the agent's edit is not in the workspace after Release: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "NOTES.md")); err != nil || string(b) != "fixed Add\n" {
		t.Errorf("the agent's NOTES.md after Release: %q, %v", b, err)
	}
}
