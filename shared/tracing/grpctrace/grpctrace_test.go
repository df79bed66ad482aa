package grpctrace_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
	. "github.com/altairalabs/promptkit-sandbox/shared/tracing/grpctrace"
)

// What Inject puts in a call's outgoing metadata, Extract on the other
// side makes the remote parent of the spans started there.
func TestInjectExtract(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, host := tp.Tracer("t").Start(context.Background(), "host")
	defer host.End()

	// Metadata already there stays; a trace context already there is
	// replaced, not doubled.
	ctx = metadata.AppendToOutgoingContext(ctx, "x-other", "kept", "traceparent", "00-stale")
	out, ok := metadata.FromOutgoingContext(Inject(ctx))
	if !ok || len(out.Get("traceparent")) != 1 || out.Get("traceparent")[0] == "00-stale" || out.Get("x-other")[0] != "kept" {
		t.Fatalf("outgoing metadata %v: want one fresh traceparent and x-other kept", out)
	}
	// The server's side: what arrived is incoming metadata.
	in := Extract(metadata.NewIncomingContext(context.Background(), out))
	sc := trace.SpanContextFromContext(in)
	if !sc.IsRemote() || sc.TraceID() != host.SpanContext().TraceID() || sc.SpanID() != host.SpanContext().SpanID() {
		t.Fatalf("extracted %v, want the host span %v as remote parent", sc, host.SpanContext())
	}

	// A backend's span takes the provider of the span its context holds.
	sctx, srv := tp.Tracer("t").Start(in, "plugin.spawn")
	_, backend := tracing.StartCall(sctx, "docker_exec", "/hooks/pii.py")
	tracing.End(backend, &sandbox.ExitError{Code: 3})
	srv.End()
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "docker.exec" {
		t.Fatalf("spans %v, want docker.exec then plugin.spawn", spans)
	}
	if spans[0].Parent.SpanID() != srv.SpanContext().SpanID() {
		t.Errorf("docker.exec's parent is %v, want plugin.spawn", spans[0].Parent.SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{"process.executable.name": "pii.py", "promptkit.sandbox.mode": "docker_exec", "process.exit.code": "3"}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("docker.exec %s = %q, want %q", k, attrs[k], v)
		}
	}
}

// Without a span nothing is injected, and nothing is extracted from
// metadata without a trace context.
func TestNoSpanNoTrace(t *testing.T) {
	ctx := context.Background()
	if md, ok := metadata.FromOutgoingContext(Inject(ctx)); ok {
		t.Errorf("metadata %v injected without a span", md)
	}
	if got := Extract(metadata.NewIncomingContext(ctx, metadata.MD{})); trace.SpanContextFromContext(got).IsValid() {
		t.Error("a span context extracted from no metadata")
	}
}
