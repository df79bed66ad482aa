package main

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// telemetry is what a command's runtime reports to: the metrics (serve
// with --metrics-addr) and the tracer provider (when the OTEL_* variables
// configure export). The zero value reports nowhere.
type telemetry struct {
	metrics *metrics.Collector
	tracer  trace.TracerProvider
}

// flushTimeout bounds sending the spans still held when a command exits.
const flushTimeout = 2 * time.Second

// startTracing makes the command's tracer provider from the OTEL_*
// variables (nil when they configure no export) and returns the function
// that sends what it holds at exit. A broken configuration is logged and
// leaves tracing off: it must not stop a hook from running.
func startTracing(service string, log hclog.Logger) (trace.TracerProvider, func()) {
	tp, err := tracing.NewProviderFromEnv(context.Background(), service, version, os.Getenv)
	if err != nil {
		log.Warn("tracing is off", "error", err)
	}
	if tp == nil {
		return nil, func() {}
	}
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("sending the last spans", "error", err)
		}
	}
}
