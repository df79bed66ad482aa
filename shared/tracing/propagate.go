package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// propagator reads and writes the W3C trace context: traceparent and
// tracestate.
var propagator = propagation.TraceContext{}

// ContextMap is the trace context of the span ctx carries, as W3C
// header names and values; nil when ctx carries no span. It travels in a
// message where no call metadata can carry it (a call on a stream that
// carries many).
func ContextMap(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagator.Inject(ctx, m)
	return m
}

// ExtractMap returns ctx carrying, as the remote parent of the spans
// started under it, the trace context m holds (see ContextMap); ctx as
// is when m holds none.
func ExtractMap(ctx context.Context, m map[string]string) context.Context {
	if len(m) == 0 {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier(m))
}
