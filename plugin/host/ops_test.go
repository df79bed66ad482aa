package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// opsConfig declares a sandbox of the test plugin's real direct backend
// and one whose calls crash the plugin process, and a filter hook for
// each way a call can end.
const opsConfig = `apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
metadata: {name: ops}
spec:
  sandboxes:
    box: {mode: test_direct}
    crashy: {mode: test_crash}
  hooks:
    allow:
      command: sh
      args: [-c, 'cat >/dev/null; echo "{\"allow\": true}"']
      hook: provider
      phases: [before_call]
      sandbox: box
    deny:
      command: sh
      args: [-c, 'cat >/dev/null; echo "{\"allow\": false, \"reason\": \"no\"}"']
      hook: provider
      phases: [before_call]
      sandbox: box
    slow:
      command: sh
      args: [-c, 'sleep 30']
      hook: provider
      phases: [before_call]
      sandbox: box
      timeout_ms: 300
    crash:
      command: sh
      hook: provider
      phases: [before_call]
      sandbox: crashy
    long:
      command: sh
      args: [-c, 'sleep "$0"', MARKER]
      hook: provider
      phases: [before_call]
      sandbox: box
      timeout_ms: 60000
`

// opsRuntime loads opsConfig with the test plugin installed, its host
// counting into opts.Metrics; the long hook sleeps with marker on its
// command line.
func opsRuntime(t *testing.T, opts hooks.Options, marker string) *hooks.Runtime {
	t.Helper()
	dir := t.TempDir()
	install(t, testPlugin, filepath.Join(dir, "plugins"), "promptkit-sandbox-test_v1.0.0")
	cfg := filepath.Join(dir, "runtime.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(opsConfig, "MARKER", marker, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Plugins = func(string, []string) (hooks.Plugins, error) {
		return New(Options{Dirs: []string{filepath.Join(dir, "plugins")}, Env: emptyEnv(t), CacheDir: t.TempDir(), Metrics: opts.Metrics})
	}
	rt, err := hooks.Load(cfg, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// waitForProcs waits until a process with marker on its command line
// runs, for at most a minute.
func waitForProcs(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		procs, err := sandboxtest.HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the hook's process did not start within a minute")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func beforeCall() *wire.Payload {
	return &wire.Payload{Hook: wire.HookProvider, Phase: "before_call", ProviderRequest: &wire.ProviderRequest{ProviderID: "p"}}
}

// call runs the hook name and checks that it allowed or denied.
func call(t *testing.T, rt *hooks.Runtime, ctx context.Context, name string, allow bool) hooks.Decision {
	t.Helper()
	d, err := rt.Call(ctx, name, beforeCall())
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	if d.Allow != allow {
		t.Fatalf("Call(%s) = %+v, want allow %v", name, d, allow)
	}
	return d
}

// Hooks that allow, deny and time out, one whose plugin process crashes
// mid-call and one whose plugin is SIGKILLed mid-call, are counted by
// sandbox and hook; each plugin process started again for the next call
// is counted as a restart.
func TestHookMetrics(t *testing.T) {
	m := metrics.New()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	st := trackStarts(t)
	marker := sandboxtest.NewMarker()
	rt := opsRuntime(t, hooks.Options{Metrics: m}, marker)
	ctx := context.Background()
	call(t, rt, ctx, "allow", true)
	call(t, rt, ctx, "allow", true)
	call(t, rt, ctx, "deny", false)
	if d := call(t, rt, ctx, "slow", false); !strings.Contains(d.Reason, "timed out") {
		t.Errorf("slow: reason %q, want a timeout", d.Reason)
	}
	call(t, rt, ctx, "crash", false)
	// The process is gone: this call starts it again.
	call(t, rt, ctx, "allow", true)

	// The second process, SIGKILLed while the long hook runs in it.
	killed := make(chan hooks.Decision, 1)
	go func() {
		d, _ := rt.Call(ctx, "long", beforeCall())
		killed <- d
	}()
	waitForProcs(t, marker)
	pids := st.pids(t)
	if len(pids) != 2 {
		t.Fatalf("%d plugin starts, want 2", len(pids))
	}
	for _, pid := range pids { // the first crashed: kill the live one
		if proctest.Alive(pid) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d := <-killed; d.Allow || !strings.Contains(d.Reason, "connection lost") {
		t.Errorf("long, its plugin killed: %+v, want a deny for the lost connection", d)
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	call(t, rt, ctx, "allow", true)

	want := `
# HELP promptkit_sandbox_hook_calls_total Hook calls, by sandbox and hook: every outcome.
# TYPE promptkit_sandbox_hook_calls_total counter
promptkit_sandbox_hook_calls_total{hook="allow",sandbox="box"} 4
promptkit_sandbox_hook_calls_total{hook="crash",sandbox="crashy"} 1
promptkit_sandbox_hook_calls_total{hook="deny",sandbox="box"} 1
promptkit_sandbox_hook_calls_total{hook="long",sandbox="box"} 1
promptkit_sandbox_hook_calls_total{hook="slow",sandbox="box"} 1
# HELP promptkit_sandbox_hook_denials_total Hook calls whose verdict denied ("allow": false), by sandbox and hook.
# TYPE promptkit_sandbox_hook_denials_total counter
promptkit_sandbox_hook_denials_total{hook="allow",sandbox="box"} 0
promptkit_sandbox_hook_denials_total{hook="crash",sandbox="crashy"} 0
promptkit_sandbox_hook_denials_total{hook="deny",sandbox="box"} 1
promptkit_sandbox_hook_denials_total{hook="long",sandbox="box"} 0
promptkit_sandbox_hook_denials_total{hook="slow",sandbox="box"} 0
# HELP promptkit_sandbox_hook_failures_total Hook calls that gave no verdict for another reason (could not run, non-zero exit, invalid verdict, cancelled), by sandbox and hook.
# TYPE promptkit_sandbox_hook_failures_total counter
promptkit_sandbox_hook_failures_total{hook="allow",sandbox="box"} 0
promptkit_sandbox_hook_failures_total{hook="crash",sandbox="crashy"} 1
promptkit_sandbox_hook_failures_total{hook="deny",sandbox="box"} 0
promptkit_sandbox_hook_failures_total{hook="long",sandbox="box"} 1
promptkit_sandbox_hook_failures_total{hook="slow",sandbox="box"} 0
# HELP promptkit_sandbox_hook_timeouts_total Hook calls killed at their timeout, by sandbox and hook.
# TYPE promptkit_sandbox_hook_timeouts_total counter
promptkit_sandbox_hook_timeouts_total{hook="allow",sandbox="box"} 0
promptkit_sandbox_hook_timeouts_total{hook="crash",sandbox="crashy"} 0
promptkit_sandbox_hook_timeouts_total{hook="deny",sandbox="box"} 0
promptkit_sandbox_hook_timeouts_total{hook="long",sandbox="box"} 0
promptkit_sandbox_hook_timeouts_total{hook="slow",sandbox="box"} 1
# HELP promptkit_sandbox_plugin_restarts_total Plugin processes started again after the previous one crashed or its connection broke, by plugin.
# TYPE promptkit_sandbox_plugin_restarts_total counter
promptkit_sandbox_plugin_restarts_total{plugin="test"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		metrics.MetricCalls, metrics.MetricDenials, metrics.MetricFailures, metrics.MetricTimeouts, metrics.MetricRestarts); err != nil {
		t.Error(err)
	}
	// Every call is in the latency histogram of its hook.
	for hook, n := range map[string]int{"allow": 4, "deny": 1, "slow": 1, "crash": 1, "long": 1} {
		sandbox := "box"
		if hook == "crash" {
			sandbox = "crashy"
		}
		if got := histogramCount(t, reg, sandbox, hook); got != uint64(n) {
			t.Errorf("%s{hook=%q}: %d observations, want %d", metrics.MetricDuration, hook, got, n)
		}
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry, sandbox, hook string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metrics.MetricDuration {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["sandbox"] == sandbox && labels["hook"] == hook {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

// A hook call's span travels from the host into the plugin process over
// the gRPC metadata: the plugin's span of the call and its backend's span
// are children of the hook's, in the caller's trace, each exported by the
// process that made it to the collector the OTEL_* variables name.
func TestHookTraceCrossesThePlugin(t *testing.T) {
	recv := otlptest.New(t)
	t.Setenv(tracing.EnvOTLPEndpoint, recv.URL)
	ctx := context.Background()
	tp, err := tracing.NewProviderFromEnv(ctx, "hooks-host", "0.0.0", os.Getenv)
	if err != nil || tp == nil {
		t.Fatalf("NewProviderFromEnv: %v, %v", tp, err)
	}
	defer tp.Shutdown(ctx)
	rt := opsRuntime(t, hooks.Options{TracerProvider: tp}, "1")

	ctx, turn := tp.Tracer("test").Start(ctx, "agent turn")
	call(t, rt, ctx, "deny", false)
	turn.End()
	// Stopping the plugin makes it send what it holds; then ours.
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	spans := recv.WaitFor(10*time.Second, "agent turn", "hook deny", "plugin.spawn", "direct.exec")
	root, hook, srv, backend := spans["agent turn"], spans["hook deny"], spans["plugin.spawn"], spans["direct.exec"]
	for name, s := range map[string]otlptest.Span{"agent turn": root, "hook deny": hook, "plugin.spawn": srv, "direct.exec": backend} {
		if s.Span == nil {
			t.Fatalf("no %q span received; got %v", name, names(recv.Spans()))
		}
	}
	chain := []struct {
		span    otlptest.Span
		parent  otlptest.Span
		service string
	}{
		{hook, root, "hooks-host"},
		{srv, hook, "promptkit-sandbox-test"},
		{backend, srv, "promptkit-sandbox-test"},
	}
	for _, c := range chain {
		if c.span.TraceID() != root.TraceID() {
			t.Errorf("%s: trace %s, want the caller's %s", c.span.Name, c.span.TraceID(), root.TraceID())
		}
		if c.span.ParentID() != c.parent.ID() {
			t.Errorf("%s: parent %s, want %s (%s)", c.span.Name, c.span.ParentID(), c.parent.ID(), c.parent.Name)
		}
		if c.span.Service != c.service {
			t.Errorf("%s: exported by %q, want %q", c.span.Name, c.span.Service, c.service)
		}
	}
	if got := hook.Attr("promptkit.hook.outcome"); got != "deny" {
		t.Errorf("hook span's outcome %q, want deny", got)
	}
	if got := hook.Attr("promptkit.sandbox.name"); got != "box" {
		t.Errorf("hook span's sandbox %q, want box", got)
	}
	if srv.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("plugin.spawn is a %v span, want server", srv.Kind)
	}
	if got := backend.Attr("process.executable.name"); got != "sh" {
		t.Errorf("direct.exec's command %q, want sh", got)
	}
}

func names(spans []otlptest.Span) string {
	var out []string
	for _, s := range spans {
		out = append(out, fmt.Sprintf("%s(%s)", s.Name, s.Service))
	}
	return strings.Join(out, ", ")
}
