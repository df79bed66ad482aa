package telemetry

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// HeaderRequestID names the request id in every HTTP answer.
const HeaderRequestID = "X-Request-Id"

// HTTP gives each request a request id (in its context, its log lines
// and the X-Request-Id answer header) and takes the W3C trace context
// (traceparent, tracestate) it brings, so the spans of the tool calls it
// carries join the caller's trace. It comes before the gate, so refused
// requests have ids too.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := NewRequestID()
		ctx := prop.Extract(WithRequestID(r.Context(), id), propagation.HeaderCarrier(r.Header))
		w.Header().Set(HeaderRequestID, id)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		t.log.Debug("http request", "request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", sw.status(), "elapsed", time.Since(start))
	})
}

// statusWriter remembers the status written. It flushes and unwraps, so
// SSE streams through it work as without it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
