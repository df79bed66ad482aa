// Package grpctrace carries the W3C trace context across a gRPC call,
// in its metadata: the plugin hop's. It is apart from package tracing so
// that a program that traces but speaks no gRPC (sandboxd) links none.
package grpctrace

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// propagator reads and writes the W3C trace context: traceparent and
// tracestate.
var propagator = propagation.TraceContext{}

// mdCarrier is gRPC metadata as a propagation carrier. gRPC keys are
// lower case, as W3C's are.
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject returns ctx with the trace context of the span it carries set
// in its outgoing gRPC metadata, replacing any trace context already
// there; ctx as is when it carries no span.
func Inject(ctx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx // nothing to carry; the common case costs nothing
	}
	tc := metadata.MD{}
	propagator.Inject(ctx, mdCarrier(tc))
	if len(tc) == 0 {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy
	if md == nil {
		md = metadata.MD{}
	}
	for k, v := range tc {
		md.Set(k, v...)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Extract returns ctx carrying, as the remote parent of the spans started
// under it, the trace context its incoming gRPC metadata brings; ctx as is
// when it brings none.
func Extract(ctx context.Context) context.Context {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	return propagator.Extract(ctx, mdCarrier(md))
}

// ClientInterceptors are the dial options that inject the caller's trace
// context into every unary and streaming call.
func ClientInterceptors() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(Inject(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(Inject(ctx), desc, cc, method, opts...)
		}),
	}
}
