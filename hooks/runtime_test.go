package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
)

// writeConfig writes a RuntimeConfig with the given spec.hooks body (and
// optional spec.sandboxes body) and returns its path.
func writeConfig(t *testing.T, sandboxes, hooks string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n")
	if sandboxes != "" {
		b.WriteString("  sandboxes:\n")
		b.WriteString(indent(sandboxes, "    "))
	}
	b.WriteString("  hooks:\n")
	b.WriteString(indent(hooks, "    "))
	path := filepath.Join(dir, "runtime.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// writeScript writes an executable /bin/sh script next to the config.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, path string, opts Options) *Runtime {
	t.Helper()
	rt, err := Load(path, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

func beforeCall() *wire.Payload {
	return &wire.Payload{Hook: wire.HookProvider, Phase: "before_call", ProviderRequest: &wire.ProviderRequest{
		ProviderID: "openai", Model: "gpt-4o",
	}}
}

func TestFilterFailClosed(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   Decision
		// wantPrefix is used instead of want.Reason when the reason
		// contains run-specific text.
		wantPrefix string
	}{
		{
			name:   "allow",
			script: `cat >/dev/null; echo '{"allow": true}'`,
			want:   Decision{Allow: true},
		},
		{
			name:   "deny with reason, enforced and metadata",
			script: `cat >/dev/null; echo '{"allow": false, "reason": "ssn found", "enforced": true, "metadata": {"detector": "ssn", "count": 2}}'`,
			want:   Decision{Reason: "ssn found", Enforced: true, Metadata: map[string]any{"detector": "ssn", "count": float64(2)}},
		},
		{
			name:   "deny without reason",
			script: `echo '{"allow": false}'`,
			want:   Decision{Reason: `hook "h" denied the request without giving a reason`},
		},
		{
			name:   "non-zero exit",
			script: `echo 'Traceback: boom' >&2; echo '{"allow": true}'; exit 3`,
			want:   Decision{Reason: `hook "h" failed: process exited with code 3 (stderr: Traceback: boom)`},
		},
		{
			name:   "empty output",
			script: `echo 'nothing to say' >&2`,
			want:   Decision{Reason: `hook "h" printed no verdict on stdout (stderr: nothing to say)`},
		},
		{
			name:       "invalid json",
			script:     `echo '{"allow": tru'`,
			wantPrefix: `hook "h" printed an invalid verdict: `,
		},
		{
			name:   "missing allow",
			script: `echo '{"reason": "fine"}'`,
			want:   Decision{Reason: `hook "h" printed a verdict without "allow"`},
		},
		{
			name:       "allow not a boolean",
			script:     `echo '{"allow": "true"}'`,
			wantPrefix: `hook "h" printed an invalid verdict: `,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := writeScript(t, dir, "hook.sh", tc.script)
			path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n")
			rt := load(t, path, Options{})
			d, err := rt.Call(context.Background(), "h", beforeCall())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantPrefix != "" {
				if d.Allow || !strings.HasPrefix(d.Reason, tc.wantPrefix) {
					t.Fatalf("got %+v, want deny with reason prefix %q", d, tc.wantPrefix)
				}
				return
			}
			assertDecision(t, d, tc.want)
		})
	}
}

func assertDecision(t *testing.T, got, want Decision) {
	t.Helper()
	if got.Allow != want.Allow || got.Reason != want.Reason || got.Enforced != want.Enforced || !equalJSON(got.Metadata, want.Metadata) {
		t.Fatalf("decision\n got %+v\nwant %+v", got, want)
	}
}

func equalJSON(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestFilterSpawnFailure(t *testing.T) {
	path := writeConfig(t, "", "h:\n  command: /nonexistent/hook\n  hook: tool\n  phases: [before_execution]\n")
	rt := load(t, path, Options{})
	d, err := rt.Call(context.Background(), "h", &wire.Payload{Hook: wire.HookTool, Phase: "before_execution", ToolRequest: &wire.ToolRequest{Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allow || !strings.HasPrefix(d.Reason, `hook "h" could not start: `) || !strings.Contains(d.Reason, "/nonexistent/hook") {
		t.Fatalf("got %+v", d)
	}
}

func TestFilterTimeoutFromTimeoutMs(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, "slow.sh", `sleep 30`)
	path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  timeout_ms: 300\n")
	rt := load(t, path, Options{})
	start := time.Now()
	d, err := rt.Call(context.Background(), "h", beforeCall())
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("timeout of 300ms took %v", elapsed)
	}
	if d.Allow || !strings.Contains(d.Reason, "timed out after 300ms") {
		t.Fatalf("got %+v", d)
	}
}

func TestStderrInReasonIsTruncated(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, "noisy.sh", `head -c 5000 /dev/zero | tr '\0' 'e' >&2; exit 1`)
	path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n")
	rt := load(t, path, Options{})
	d, _ := rt.Call(context.Background(), "h", beforeCall())
	want := `hook "h" failed: process exited with code 1 (stderr: ` + strings.Repeat("e", maxStderrInReason) + `… [5000 bytes in all])`
	if d.Reason != want {
		t.Fatalf("reason (%d bytes) = %.200q…", len(d.Reason), d.Reason)
	}
}

func TestRunOrderAndFirstDenyWins(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	first := writeScript(t, dir, "first.sh", `echo first >> `+trace+`; echo '{"allow": true}'`)
	second := writeScript(t, dir, "second.sh", `echo second >> `+trace+`; echo '{"allow": false, "reason": "second says no"}'`)
	third := writeScript(t, dir, "third.sh", `echo third >> `+trace+`; echo '{"allow": true}'`)
	other := writeScript(t, dir, "other.sh", `echo other >> `+trace+`; echo '{"allow": true}'`)
	hooks := "" +
		"zeta:\n  command: " + first + "\n  hook: provider\n  phases: [before_call]\n" +
		"alpha:\n  command: " + second + "\n  hook: provider\n  phases: [before_call]\n" +
		"mid:\n  command: " + third + "\n  hook: provider\n  phases: [before_call]\n" +
		"after:\n  command: " + other + "\n  hook: provider\n  phases: [after_call]\n"
	rt := load(t, writeConfig(t, "", hooks), Options{})
	d, err := rt.Run(context.Background(), beforeCall())
	if err != nil {
		t.Fatal(err)
	}
	assertDecision(t, d, Decision{Reason: "second says no"})
	got, _ := os.ReadFile(trace)
	if string(got) != "first\nsecond\n" {
		t.Fatalf("hooks ran %q, want first then second only", got)
	}
}

func TestObserveDoesNotDelayCaller(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	script := writeScript(t, dir, "slow.sh", `cat > /dev/null; sleep 1; touch `+done)
	path := writeConfig(t, "", "obs:\n  command: "+script+"\n  hook: session\n  phases: [session_start]\n  mode: observe\n")
	rt, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &wire.Payload{Hook: wire.HookSession, Phase: "session_start", SessionEvent: &wire.SessionEvent{SessionID: "s"}}
	start := time.Now()
	d, err := rt.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Fatalf("observe hook delayed the caller by %v", elapsed)
	}
	assertDecision(t, d, Allow)
	if _, err := os.Stat(done); err == nil {
		t.Fatal("observer finished before Run returned; it was not in the background")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(done); err != nil {
		t.Fatal("Close returned before the observer finished")
	}
}

func TestObserveBoundedConcurrency(t *testing.T) {
	dir := t.TempDir()
	running := filepath.Join(dir, "running")
	peak := filepath.Join(dir, "peak")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each observer registers itself, records how many are registered, and
	// leaves after a while.
	script := writeScript(t, dir, "obs.sh", `cat >/dev/null
touch `+running+`/$$
ls `+running+` | wc -l >> `+peak+`
sleep 0.3
rm `+running+`/$$`)
	path := writeConfig(t, "", "obs:\n  command: "+script+"\n  hook: session\n  phases: [session_update]\n  mode: observe\n")
	rt, err := Load(path, Options{ObserveConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := &wire.Payload{Hook: wire.HookSession, Phase: "session_update", SessionEvent: &wire.SessionEvent{SessionID: "s"}}
	for range 8 {
		if _, err := rt.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(peak)
	counts := strings.Fields(string(data))
	if len(counts) != 8 {
		t.Fatalf("%d observers ran, want 8", len(counts))
	}
	for _, c := range counts {
		if c != "1" && c != "2" {
			t.Fatalf("observer saw %s running at once, limit is 2 (all: %v)", c, counts)
		}
	}
}

func TestObserveQueueFullDropsAndLogs(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, "obs.sh", `sleep 0.5`)
	path := writeConfig(t, "", "obs:\n  command: "+script+"\n  hook: session\n  phases: [session_update]\n  mode: observe\n")
	var logs syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	rt, err := Load(path, Options{Logger: log, ObserveConcurrency: 1, ObserveQueue: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := &wire.Payload{Hook: wire.HookSession, Phase: "session_update", SessionEvent: &wire.SessionEvent{}}
	start := time.Now()
	for range 5 {
		_, _ = rt.Run(context.Background(), p)
	}
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Fatalf("a full queue delayed the caller by %v", elapsed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = rt.Close(ctx)
	if !strings.Contains(logs.String(), "observe hook dropped: queue full") {
		t.Fatalf("no drop logged:\n%s", logs.String())
	}
}

func TestObserveFailureIsLogged(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, "bad.sh", `echo 'audit store unreachable' >&2; exit 7`)
	path := writeConfig(t, "", "audit:\n  command: "+script+"\n  hook: session\n  phases: [session_end]\n  mode: observe\n")
	var logs syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	rt, err := Load(path, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Run(context.Background(), &wire.Payload{Hook: wire.HookSession, Phase: "session_end", SessionEvent: &wire.SessionEvent{}})
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"observe hook failed", "hook=audit", "process exited with code 7", "audit store unreachable"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestCloseCancelsObserversAtDeadline(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := writeScript(t, dir, "stuck.sh", `echo $$ > `+pidFile+`; exec sleep 60`)
	path := writeConfig(t, "", "stuck:\n  command: "+script+"\n  hook: session\n  phases: [session_end]\n  mode: observe\n  timeout_ms: 60000\n")
	rt, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Run(context.Background(), &wire.Payload{Hook: wire.HookSession, Phase: "session_end", SessionEvent: &wire.SessionEvent{}})
	waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = rt.Close(ctx)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("Close took %v with a 300ms deadline", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "1 observe hook(s) cancelled") {
		t.Fatalf("Close error = %v", err)
	}
	pid, _ := os.ReadFile(pidFile)
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); err == nil {
		t.Fatalf("observer process %s survived Close", strings.TrimSpace(string(pid)))
	}
}

func TestEvalHookGetsRawResult(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "stdin")
	script := writeScript(t, dir, "eval.sh", `cat > `+got)
	path := writeConfig(t, "", "ev:\n  command: "+script+"\n  hook: eval\n")
	rt, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := rt.Hook("ev")
	if h.Mode != config.ModeObserve || h.Timeout != 5*time.Second {
		t.Fatalf("eval hook mode %q timeout %v, want observe 5s", h.Mode, h.Timeout)
	}
	score := 0.5
	d, err := rt.Run(context.Background(), &wire.Payload{Hook: wire.HookEval, EvalResult: &wire.EvalResult{EvalID: "e1", Type: "metric", Score: &score, DurationMs: 2}})
	if err != nil || !d.Allow {
		t.Fatalf("Run = %+v, %v", d, err)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(got)
	if want := `{"eval_id":"e1","type":"metric","score":0.5,"duration_ms":2}`; string(data) != want {
		t.Fatalf("stdin = %s, want %s", data, want)
	}
}

func TestCallErrors(t *testing.T) {
	path := writeConfig(t, "", "h:\n  command: /bin/true\n  hook: provider\n  phases: [before_call]\n")
	rt := load(t, path, Options{})
	_, err := rt.Call(context.Background(), "nope", beforeCall())
	var ue *UnknownHookError
	if !errors.As(err, &ue) || err.Error() != `no hook named "nope" in the config (hooks: h)` {
		t.Fatalf("got %v", err)
	}
	_, err = rt.Call(context.Background(), "h", &wire.Payload{Hook: wire.HookProvider, Phase: "after_call"})
	if err == nil || err.Error() != `hook "h" does not run on phase "after_call" (its phases: before_call)` {
		t.Fatalf("got %v", err)
	}
	_, err = rt.Call(context.Background(), "h", &wire.Payload{Hook: wire.HookTool, Phase: "before_execution"})
	if err == nil || err.Error() != `hook "h" is a provider hook, not tool` {
		t.Fatalf("got %v", err)
	}
}

func TestSandboxFactoryErrorNamesFileLineEntry(t *testing.T) {
	path := writeConfig(t, "local:\n  mode: direct\n  timout: 5s\n", "h:\n  command: /bin/true\n  hook: provider\n  phases: [before_call]\n  sandbox: local\n")
	_, err := Load(path, Options{})
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want *config.Error", err, err)
	}
	want := path + `:5:5: spec.sandboxes.local: open sandbox "local" (mode direct): config: unknown key "timout"`
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
}

func TestRelativeCommandResolvesAgainstConfigDir(t *testing.T) {
	path := writeConfig(t, "", "h:\n  command: ./hooks/allow.sh\n  hook: provider\n  phases: [before_call]\n")
	dir := filepath.Dir(path)
	if err := os.Mkdir(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(dir, "hooks"), "allow.sh", `echo '{"allow": true}'`)
	rt := load(t, path, Options{})
	// Run from elsewhere: the path must not depend on the working directory.
	t.Chdir(t.TempDir())
	d, err := rt.Call(context.Background(), "h", beforeCall())
	if err != nil || !d.Allow {
		t.Fatalf("got %+v, %v", d, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
