package hooks

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
)

// Filter and observe hooks in the direct sandbox are counted by their
// outcome; an observe hook's span, though it runs after the call has
// returned, is in the caller's trace.
func TestRuntimeTelemetry(t *testing.T) {
	// The observer first: the filter's deny ends the run.
	path := writeConfig(t, "", `audit:
  command: sh
  args: [-c, 'cat >/dev/null; exit 4']
  hook: provider
  phases: [before_call]
  mode: observe
guard:
  command: sh
  args: [-c, 'cat >/dev/null; echo "{\"allow\": false, \"reason\": \"no\"}"']
  hook: provider
  phases: [before_call]
idle:
  command: sh
  hook: provider
  phases: [after_call]
`)
	m := metrics.New()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	rt, err := Load(path, Options{Metrics: m, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, turn := tp.Tracer("test").Start(context.Background(), "turn")
	d, err := rt.Run(ctx, beforeCall())
	turn.End()
	if err != nil || d.Allow {
		t.Fatalf("Run = %+v, %v; want a deny", d, err)
	}
	// Close waits for the observer.
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	want := `
# HELP promptkit_sandbox_hook_calls_total Hook calls, by sandbox and hook: every outcome.
# TYPE promptkit_sandbox_hook_calls_total counter
promptkit_sandbox_hook_calls_total{hook="audit",sandbox="direct"} 1
promptkit_sandbox_hook_calls_total{hook="guard",sandbox="direct"} 1
promptkit_sandbox_hook_calls_total{hook="idle",sandbox="direct"} 0
# HELP promptkit_sandbox_hook_denials_total Hook calls whose verdict denied ("allow": false), by sandbox and hook.
# TYPE promptkit_sandbox_hook_denials_total counter
promptkit_sandbox_hook_denials_total{hook="audit",sandbox="direct"} 0
promptkit_sandbox_hook_denials_total{hook="guard",sandbox="direct"} 1
promptkit_sandbox_hook_denials_total{hook="idle",sandbox="direct"} 0
# HELP promptkit_sandbox_hook_failures_total Hook calls that gave no verdict for another reason (could not run, non-zero exit, invalid verdict, cancelled), by sandbox and hook.
# TYPE promptkit_sandbox_hook_failures_total counter
promptkit_sandbox_hook_failures_total{hook="audit",sandbox="direct"} 1
promptkit_sandbox_hook_failures_total{hook="guard",sandbox="direct"} 0
promptkit_sandbox_hook_failures_total{hook="idle",sandbox="direct"} 0
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), metrics.MetricCalls, metrics.MetricDenials, metrics.MetricFailures); err != nil {
		t.Error(err)
	}

	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		spans[s.Name()] = s
	}
	root := spans["turn"]
	for _, name := range []string{"hook guard", "hook audit"} {
		s, ok := spans[name]
		if !ok {
			t.Fatalf("no %q span; got %v", name, exp.GetSpans())
		}
		if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("%s is not a child of the caller's span", name)
		}
	}
	// Both hooks' processes, each under its hook's span.
	execs := 0
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() != "direct.exec" {
			continue
		}
		execs++
		if p := s.Parent().SpanID(); p != spans["hook guard"].SpanContext().SpanID() && p != spans["hook audit"].SpanContext().SpanID() {
			t.Errorf("a direct.exec span's parent %v is no hook's span", p)
		}
	}
	if execs != 2 {
		t.Errorf("%d direct.exec spans, want 2", execs)
	}
}
