package dockerbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/internal/scrapetest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestCodegenRealImage provisions the real sandboxd image (make
// sandboxd-image; built here if the engine lacks it) on a Go module and
// has an independent MCP client use every kind of tool through the
// endpoint: Read, Write, Edit, Glob, Grep, Bash, run_tests. Inside, the
// agent is the workspace's owner and has no network.
func TestCodegenRealImage(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
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
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "workspace": ws, "metrics": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("provisioned %s in %v (up to its MCP initialize answering)", image, time.Since(start).Round(time.Millisecond))
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

	// The image carries Graphviz for render_diagram, working.
	if out := mcptest.CallText(t, cs, "render_diagram", map[string]any{"language": "dot", "source": "digraph { a -> b }", "format": "png"}); !strings.Contains(out, "dot") {
		t.Errorf("render_diagram in the image: %q", out)
	}

	// What the run did shows in sandboxd's metrics, scraped through the
	// port the provider forwards to its metrics socket.
	scrape := scrapetest.Get(t, got.Details["metrics"])
	for _, want := range []string{
		`sandboxd_tool_calls_total{tool="Read"} 1`,
		`sandboxd_tool_calls_total{tool="run_tests"} 2`,
		`sandboxd_tool_calls_total{tool="Bash"} 1`,
		`sandboxd_tool_errors_total{tool="Read"} 0`,
	} {
		if !strings.Contains(scrape, want) {
			t.Errorf("metrics: no %q in the scrape:\n%s", want, scrape)
		}
	}

	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
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

// realImage is the sandboxd image of langs (none: the default, Go) as
// make sandboxd-image and make sandboxd-images build it, built here when
// the engine lacks it (minutes, once).
func realImage(t testing.TB, langs ...string) string {
	t.Helper()
	dockertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{Languages: langs})
	if err != nil {
		t.Fatal(err)
	}
	return img.Ref
}

// TestCodegenTenAtOnce: ten sandboxes of the real image provisioned at
// once each answer a tool call; it logs each one's time from Provision
// to its first MCP answer.
func TestCodegenTenAtOnce(t *testing.T) {
	image := realImage(t)
	p, _ := newTestProvider(t)
	const n = 10
	var wg sync.WaitGroup
	times := make([]time.Duration, n)
	errs := make([]error, n)
	eps := make([]plugin.Provisioned, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			eps[i], errs[i] = p.Provision(context.Background(), plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{"image": image}})
			times[i] = time.Since(start).Round(time.Millisecond)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("provision %d: %v", i, errs[i])
		}
	}
	for i := range n {
		cs := mcptest.Connect(t, eps[i].Endpoint, eps[i].Token)
		want := "sandbox-" + strconv.Itoa(i)
		if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "echo " + want}); strings.TrimSpace(out) != want {
			t.Errorf("sandbox %d: Bash echo: %q", i, out)
		}
	}
	slices.Sort(times)
	t.Logf("ten at once, Provision to first MCP answer: median %v, max %v (%v)", times[n/2], times[n-1], times)
}

// BenchmarkCodegenUp is the time from Provision to the first MCP answer
// of one sandbox of the real image (Release is not timed): warm, with
// the image's files in the page cache, and cold, with the caches dropped
// before each provision (root only; the machine's other work slows too).
func BenchmarkCodegenUp(b *testing.B) {
	image := realImage(b)
	p, _ := newTestProvider(b)
	up := func(b *testing.B, before func(b *testing.B)) {
		for b.Loop() {
			b.StopTimer()
			before(b)
			b.StartTimer()
			got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: "bench-up", Mode: CodegenMode, Config: map[string]any{"image": image}})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("warm", func(b *testing.B) { up(b, func(*testing.B) {}) })
	b.Run("cold", func(b *testing.B) {
		up(b, func(b *testing.B) {
			syscall.Sync()
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
				b.Skipf("cannot drop the page cache (not root?): %v", err)
			}
		})
	})
}
