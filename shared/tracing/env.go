package tracing

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// The environment variables that carry trace context into a process, as
// OpenTelemetry's environment carrier names them.
const (
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
)

// envCarrier is trace context as environment variables.
type envCarrier map[string]string

func (c envCarrier) Get(key string) string { return c[strings.ToUpper(key)] }
func (c envCarrier) Set(key, value string) { c[strings.ToUpper(key)] = value }
func (c envCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

var _ propagation.TextMapCarrier = envCarrier(nil)

// ContextEnv is the trace context ctx carries as NAME=VALUE entries for a
// process's environment (TRACEPARENT, TRACESTATE); none without a span.
func ContextEnv(ctx context.Context) []string {
	c := envCarrier{}
	propagator.Inject(ctx, c)
	var out []string
	for _, k := range []string{EnvTraceParent, EnvTraceState} {
		if v := c[k]; v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// ExtractEnv returns ctx carrying the trace context getenv's TRACEPARENT
// and TRACESTATE give, so that this process's spans continue its
// starter's trace.
func ExtractEnv(ctx context.Context, getenv func(string) string) context.Context {
	c := envCarrier{}
	for _, k := range []string{EnvTraceParent, EnvTraceState} {
		if v := getenv(k); v != "" {
			c[k] = v
		}
	}
	if len(c) == 0 {
		return ctx
	}
	return propagator.Extract(ctx, c)
}
