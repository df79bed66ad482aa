package tracing_test

import (
	"context"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing/grpctrace"
)

// BenchmarkOff is what a call pays for tracing when none is configured:
// a backend's StartCall and End, and the client's Inject.
func BenchmarkOff(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sctx, span := tracing.StartCall(ctx, "direct", "/bin/sh")
		_ = grpctrace.Inject(sctx)
		tracing.End(span, nil)
	}
}
