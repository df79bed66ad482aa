package dockerbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestCodegenRealImageAttacks runs issue 28's attacks on the daemon in
// the container codegen up starts, where sandboxd and the agent share a
// user: the agent SIGSTOPs its supervisor (spelled to pass the
// denylist) and sleeps on, in the foreground and in a background shell;
// and it hands edit_function_body 60 KB of nested blocks, which once
// had gofmt take gigabytes and the container's memory limit kill
// sandboxd. The timeout answers, KillShell returns, nothing of either
// call is left, and sandboxd goes on answering. A later call sees an
// earlier call's background process but cannot read its environment
// (each call is a Landlock domain of its own: Docker's default seccomp
// profile allows it).
func TestCodegenRealImageAttacks(t *testing.T) {
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, _ := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode,
		Config: map[string]any{"image": image, "workspace": ws, "memory": "2g"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}) })
	cs := mcptest.Connect(t, got.Endpoint, got.Token)

	// Each call's processes carry a marker of their own in their
	// arguments (sleep's): left counts those still running.
	frozen := func(marker string) string {
		return `p=$PPID; sleep 300` + marker + ` & kill -STOP $p; exec sleep 301` + marker
	}
	left := func(marker string) string {
		// The pattern's brackets keep grep from matching itself.
		return strings.TrimSpace(mcptest.CallText(t, cs, "Bash", map[string]any{"command": fmt.Sprintf(
			`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'sleep 30[01]%s' || true`,
			strings.Replace(marker, ".", "[.]", 1))}))
	}

	start := time.Now()
	text, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": frozen(".1"), "timeout": 3000})
	took := time.Since(start)
	if !strings.Contains(text, "Command timed out after 3s") {
		t.Errorf("Bash with its supervisor stopped: %q", text)
	}
	// The timeout, the kill grace and a loaded machine's delays: the old
	// daemon never answered.
	if took > 20*time.Second {
		t.Errorf("Bash with its supervisor stopped answered after %v", took)
	}
	if n := left(".1"); n != "0" {
		t.Errorf("%s processes of the timed-out call left", n)
	}

	out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": frozen(".2"), "run_in_background": true})
	id := strings.TrimPrefix(out, "Started background shell ")
	time.Sleep(500 * time.Millisecond) // let it stop its supervisor
	start = time.Now()
	if out := mcptest.CallText(t, cs, "KillShell", map[string]any{"shell_id": id}); out != "Killed background shell "+id {
		t.Errorf("KillShell of a shell whose supervisor is stopped: %q", out)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("KillShell of a shell whose supervisor is stopped took %v", took)
	}
	if n := left(".2"); n != "0" {
		t.Errorf("%s processes of the killed shell left", n)
	}

	const canary = "ENV_CANARY_5e0c2a"
	out = mcptest.CallText(t, cs, "Bash", map[string]any{"command": "export HELD=" + canary + "; exec sleep 302", "run_in_background": true})
	id = strings.TrimPrefix(out, "Started background shell ")
	dump := mcptest.CallText(t, cs, "Bash", map[string]any{"command": `until grep -qsx sleep /proc/[0-9]*/comm; do sleep 0.05; done; echo seen; ` +
		`for f in /proc/[0-9]*/environ; do tr '\0' '\n' 2>/dev/null <$f; done | grep -c ` + canary + ` || true`})
	if dump = strings.TrimSpace(dump); dump != "seen\n0" {
		t.Errorf("a later call reading an earlier call's environment: %q, want %q", dump, "seen\n0")
	}
	mcptest.CallText(t, cs, "KillShell", map[string]any{"shell_id": id})

	src := "package p\n\nfunc F() {}\n"
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "p.go", "content": src})
	mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "p.go"})
	body := strings.Repeat("{", 30000) + strings.Repeat("}", 30000)
	text, isErr := mcptest.Call(t, cs, "edit_function_body", map[string]any{"file_path": "p.go", "function_name": "F", "new_body": body})
	if want := "edit_function_body F in p.go: new_body nests 30000 levels deep; the limit is 512"; !isErr || text != want {
		t.Errorf("60 KB of nested blocks: %q (error %v), want %q", text, isErr, want)
	}
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "p.go"}); !strings.Contains(out, "func F() {}") {
		t.Errorf("sandboxd after the edit: Read %q", out)
	}
}
