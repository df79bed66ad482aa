package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Refusal kinds a call can end with, counted apart from other errors.
const (
	RefusedDenylist = "denylist" // Bash's denylist refused the command
	RefusedPath     = "path"     // a path leads out of the workspace
)

// Telemetry is what every tool call reports to: metrics, a span and a
// log line carrying its request id.
type Telemetry struct {
	metrics *Metrics
	tracer  trace.Tracer
	log     *slog.Logger
}

// New wraps m (required), tp (nil: no spans) and log.
func New(m *Metrics, tp trace.TracerProvider, log *slog.Logger) *Telemetry {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Telemetry{metrics: m, tracer: tp.Tracer("github.com/altairalabs/promptkit-sandbox/cmd/sandboxd"), log: log}
}

// Metrics are the metrics calls are counted in.
func (t *Telemetry) Metrics() *Metrics { return t.metrics }

// Call is one tool call in flight; End it when the tool returns.
type Call struct {
	t     *Telemetry
	tool  string
	id    string
	start time.Time
	span  trace.Span
	log   *slog.Logger
}

// Start begins a call of tool in session: it takes the request id of the
// HTTP request that carried the call (a new one over stdio), and starts
// its span under the trace context the request brought, if any. The
// context it returns carries both.
func (t *Telemetry) Start(ctx context.Context, tool, session string) (context.Context, *Call) {
	id := RequestID(ctx)
	if id == "" {
		id = NewRequestID()
		ctx = WithRequestID(ctx, id)
	}
	ctx, span := t.tracer.Start(ctx, "tools/call "+tool,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.tool.name", tool),
			attribute.String("mcp.session.id", session),
			attribute.String("sandboxd.request_id", id),
		))
	return ctx, &Call{t: t, tool: tool, id: id, start: time.Now(), span: span,
		log: t.log.With("request_id", id, "tool", tool, "session", session)}
}

// RequestID is the call's request id.
func (c *Call) RequestID() string { return c.id }

// End records how the call went: failed says its result is an error
// (isError), refused names a refusal (RefusedDenylist, RefusedPath) or
// is "".
func (c *Call) End(failed bool, refused string) {
	elapsed := time.Since(c.start)
	m := c.t.metrics
	m.calls.WithLabelValues(c.tool).Inc()
	m.duration.WithLabelValues(c.tool).Observe(elapsed.Seconds())
	if failed {
		m.errors.WithLabelValues(c.tool).Inc()
	}
	switch refused {
	case RefusedDenylist:
		m.denylist.Inc()
	case RefusedPath:
		m.paths.WithLabelValues(c.tool).Inc()
	}
	if refused != "" {
		c.span.SetAttributes(attribute.String("sandboxd.refused", refused))
	}
	if failed {
		// The message stays out of the span: it is the agent's to read,
		// scrubbed for it, and may quote the workspace.
		c.span.SetStatus(codes.Error, "tool error")
	}
	c.span.End()
	c.log.Info("tool call", "elapsed", elapsed, "error", failed, "refused", refused)
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID is a fresh random request id: 16 hex digits.
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24
	return hex.EncodeToString(b[:])
}
