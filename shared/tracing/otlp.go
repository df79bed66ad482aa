package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/proto"
)

// otlpExporter sends spans over OTLP/HTTP in protobuf: one POST of an
// ExportTraceServiceRequest a batch. It is ours, not OpenTelemetry's
// otlptracehttp, because that one links gRPC (its request type comes
// from the collector's gRPC service package, with grpc-gateway): 8.7 MB
// of sandboxd's binary, and about 3 MB of what every idle sandboxd keeps
// resident (issue 34). The request is sent as the TracesData message,
// which has the same single field, so the bytes on the wire are the
// same. It reads the standard OTEL_EXPORTER_OTLP_* variables as that
// exporter does (see otlpConfig), and retries as it does on the answers
// the specification calls retryable.
type otlpExporter struct {
	cfg     otlpConfig
	client  *http.Client
	stopped atomic.Bool
}

// Retrying: the first wait, doubled after each try, up to the most; a
// Retry-After the collector sends is taken instead, as long as the
// export's time lasts.
const (
	retryFirst = time.Second
	retryMost  = 5 * time.Second
)

// maxAnswer bounds what is read of a collector's answer (a partial
// success, an error's words): enough to quote, never a reason to hold
// memory.
const maxAnswer = 4 << 10

var errExporterStopped = errors.New("tracing: the OTLP exporter is shut down")

func newOTLPExporter(cfg otlpConfig, client *http.Client) *otlpExporter {
	return &otlpExporter{cfg: cfg, client: client}
}

// ExportSpans sends spans in one request, tried again on a retryable
// failure until the configured timeout.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return errExporterStopped
	}
	if len(spans) == 0 {
		return nil
	}
	body, err := proto.Marshal(tracesData(spans))
	if err != nil {
		return fmt.Errorf("tracing: encode %d spans: %w", len(spans), err)
	}
	if e.cfg.gzip {
		if body, err = gzipped(body); err != nil {
			return fmt.Errorf("tracing: compress %d spans: %w", len(spans), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.timeout)
	defer cancel()
	wait := retryFirst
	for {
		retryAfter, err := e.post(ctx, body)
		if err == nil {
			return nil
		}
		var final *finalError
		if errors.As(err, &final) {
			return err
		}
		if retryAfter > 0 {
			wait = retryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("tracing: export %d spans to %s: %w (given up: %w)", len(spans), e.cfg.url, err, context.Cause(ctx))
		}
		wait = min(2*wait, retryMost)
	}
}

// finalError is a failure that trying again would not mend.
type finalError struct{ err error }

func (f *finalError) Error() string { return f.err.Error() }
func (f *finalError) Unwrap() error { return f.err }

// post sends one request. A failure it returns is retryable unless it is
// a *finalError; retryAfter is the wait the collector asked for, if any.
func (e *otlpExporter) post(ctx context.Context, body []byte) (retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.url, bytes.NewReader(body))
	if err != nil {
		return 0, &finalError{fmt.Errorf("tracing: export to %s: %w", e.cfg.url, err)}
	}
	for k, v := range e.cfg.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("tracing: export to %s: %w", e.cfg.url, err)
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // so the connection is kept
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, nil
	}
	err = fmt.Errorf("tracing: export to %s: %s: %s", e.cfg.url, resp.Status, clipAnswer(answer))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
		return retryAfter, err
	}
	return 0, &finalError{err}
}

// Shutdown stops the exporter: later exports fail at once.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return nil
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// clipAnswer quotes the head of a collector's answer, which may be
// protobuf (a Status) or text.
func clipAnswer(b []byte) string {
	const n = 256
	if len(b) > n {
		b = b[:n]
	}
	return strconv.Quote(string(b))
}
