package dockerbox

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestCodegenPauseResume: a paused sandbox's container is frozen (the
// engine says paused; its background shell counts no further); a call
// then gets 409 and a message naming the state and how to resume, at
// once, and an MCP client's call fails with it; List says paused. After
// Resume the same files are there, and the same background shell goes on
// counting, readable in the same MCP session; Release of a paused
// sandbox leaves nothing.
func TestCodegenPauseResume(t *testing.T) {
	image := realImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	ctx := context.Background()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "cache": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "before the pause\n"})
	out := mcptest.CallText(t, cs, "Bash", map[string]any{"run_in_background": true,
		"command": "i=0; while true; do i=$((i+1)); echo $i > count; sleep 0.05; done"})
	shell := regexp.MustCompile(`\b(bash_[0-9a-z]+|[0-9a-f]{6,})\b`).FindString(out)
	if shell == "" {
		t.Fatalf("no shell ID in %q", out)
	}
	count := func() int {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(got.Workspace, "count"))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	time.Sleep(300 * time.Millisecond)

	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if s := docker(t, "inspect", "-f", "{{.State.Status}}", got.Details["container"]); s != "paused" {
		t.Errorf("container state %q, want paused", s)
	}
	frozen := count()
	time.Sleep(300 * time.Millisecond)
	if n := count(); n != frozen || n == 0 {
		t.Errorf("the background shell counted %d then %d while paused", frozen, n)
	}
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, got.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+got.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "is paused") || !strings.Contains(string(body), "codegen resume "+got.ID) {
		t.Errorf("a call while paused: %d %q", resp.StatusCode, body)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the refusal took %v", took)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "kept.txt"}})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "is paused") {
		t.Errorf("an MCP client's call while paused: %v, want the reason", err)
	}
	if list, _ := p.List(ctx, plugin.ListOptions{Usage: true}); len(list) != 1 || list[0].Details[provision.State] != provision.StatePaused {
		t.Errorf("List while paused: %+v", list)
	} else {
		// What it uses: memory and processes held, CPU time spent.
		d := list[0].Details
		for _, k := range []string{provision.UsageMemory, provision.UsagePids, provision.UsageCPUSeconds} {
			if v, err := strconv.ParseFloat(d[k], 64); err != nil || v <= 0 {
				t.Errorf("List: %s = %q, want a positive number", k, d[k])
			}
		}
		t.Logf("usage while paused: memory %s B, %s pids, %s s of CPU", d[provision.UsageMemory], d[provision.UsagePids], d[provision.UsageCPUSeconds])
	}

	start = time.Now()
	if err := p.Resume(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	again := mcptest.Connect(t, got.Endpoint, got.Token)
	if out := mcptest.CallText(t, again, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "before the pause") {
		t.Errorf("Read after Resume: %q", out)
	}
	t.Logf("Resume to the first answer of a new MCP client: %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	if n := count(); n <= frozen {
		t.Errorf("the background shell did not go on after Resume: %d, %d when paused", n, frozen)
	}
	// The session that started the shell goes on: background shells are
	// its own.
	if out := mcptest.CallText(t, cs, "BashOutput", map[string]any{"bash_id": shell}); !strings.Contains(out, "running") {
		t.Errorf("BashOutput %s after Resume, in the session that started it: %q", shell, out)
	}

	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	assertNoContainers(t, name)
}

// TestCodegenPausesWhenIdle: with on_idle: pause, a sandbox nothing is
// connected to past its idle_timeout is paused, not released (listed
// paused, its container frozen); the next MCP client just connects: its
// first request resumes the sandbox, which has its files.
func TestCodegenPausesWhenIdle(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	ctx := context.Background()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{
		"image": image, "cache": "none", "idle_timeout": "1s", "on_idle": "pause"}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "before the nap\n"})
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	// Idle is no connection at all: the client's kept-alive ones go too.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _ := p.List(ctx, plugin.ListOptions{})
		if len(list) != 1 {
			t.Fatalf("List: %+v (released instead of paused?)", list)
		}
		if list[0].Details[provision.State] == provision.StatePaused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not paused 30s after going idle: %+v", list[0].Details)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := docker(t, "inspect", "-f", "{{.State.Status}}", got.Details["container"]); s != "paused" {
		t.Errorf("container state %q, want paused", s)
	}
	time.Sleep(2 * time.Second) // past idle_timeout again: still kept
	start := time.Now()
	again := mcptest.Connect(t, got.Endpoint, got.Token)
	if out := mcptest.CallText(t, again, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "before the nap") {
		t.Errorf("Read after the wake: %q", out)
	}
	t.Logf("a new client's first answer from a sandbox paused while idle: %v", time.Since(start).Round(time.Millisecond))
	if list, _ := p.List(ctx, plugin.ListOptions{}); len(list) != 1 || list[0].Details[provision.State] != "running" {
		t.Errorf("List after the wake: %+v", list)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	assertNoContainers(t, name)
}

// BenchmarkCodegenResume is Resume to a new MCP client's first tools/list
// answer, against a cold Provision to the same in the same run (the real
// image; the pause and the release are not timed).
func BenchmarkCodegenResume(b *testing.B) {
	image := realImage(b)
	p, _ := newTestProvider(b)
	ctx := context.Background()
	cfg := map[string]any{"image": image, "cache": "none"}
	firstAnswer := func(b *testing.B, got plugin.Provisioned) {
		cs := mcptest.Connect(b, got.Endpoint, got.Token)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		_ = cs.Close()
	}
	b.Run("resume", func(b *testing.B) {
		got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "bench-resume", Mode: CodegenMode, Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			if err := p.Pause(ctx, got.ID); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := p.Resume(ctx, got.ID); err != nil {
				b.Fatal(err)
			}
			firstAnswer(b, got)
		}
		b.StopTimer()
		_ = p.Release(ctx, got.ID, plugin.ReleaseOptions{})
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "bench-resume", Mode: CodegenMode, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			firstAnswer(b, got)
			b.StopTimer()
			_ = p.Release(ctx, got.ID, plugin.ReleaseOptions{})
			b.StartTimer()
		}
	})
}
