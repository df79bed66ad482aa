package hooks

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
)

// tracerName names the runtime's spans' instrumentation scope.
const tracerName = "github.com/altairalabs/promptkit-sandbox/hooks"

// telemetry is where every hook call reports: the metrics and a span.
type telemetry struct {
	metrics *metrics.Collector // nil counts nothing
	tracer  trace.Tracer
}

func newTelemetry(m *metrics.Collector, tp trace.TracerProvider) telemetry {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return telemetry{metrics: m, tracer: tp.Tracer(tracerName)}
}

// hookCall is one hook call being measured.
type hookCall struct {
	t     telemetry
	h     *Hook
	start time.Time
	span  trace.Span
}

// start begins h's call: its span is a child of the span in ctx, if
// any, and the context returned carries it to the sandbox, which passes
// it on to a plugin.
func (t telemetry) start(ctx context.Context, h *Hook) (context.Context, *hookCall) {
	ctx, span := t.tracer.Start(ctx, "hook "+h.Name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("promptkit.hook.name", h.Name),
			attribute.String("promptkit.hook.type", h.Type),
			attribute.String("promptkit.hook.mode", h.Mode),
			attribute.String("promptkit.sandbox.name", h.SandboxName()),
		))
	return ctx, &hookCall{t: t, h: h, start: time.Now(), span: span}
}

// outcomeNames are the values of the span's promptkit.hook.outcome.
var outcomeNames = map[metrics.Outcome]string{
	metrics.Allowed:  "allow",
	metrics.Denied:   "deny",
	metrics.TimedOut: "timeout",
	metrics.Failed:   "error",
}

// end records how the call went. A denial is the hook's answer, not an
// error of the span; a timeout or failure is.
func (c *hookCall) end(o metrics.Outcome) {
	c.t.metrics.Call(c.h.SandboxName(), c.h.Name, o, time.Since(c.start))
	c.span.SetAttributes(attribute.String("promptkit.hook.outcome", outcomeNames[o]))
	if o == metrics.TimedOut || o == metrics.Failed {
		// The reason stays out of the span: it quotes the hook's output.
		c.span.SetStatus(codes.Error, "hook "+outcomeNames[o])
	}
	c.span.End()
}
