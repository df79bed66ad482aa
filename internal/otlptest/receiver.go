// Package otlptest is an OTLP/HTTP trace receiver for tests: an
// httptest server on 127.0.0.1 that decodes each export request
// (protobuf, gzipped or not) and keeps its spans, with the service that
// sent each.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where OTLP/HTTP exporters send traces.
const TracesPath = "/v1/traces"

// Span is one span received, with the service.name of its resource.
type Span struct {
	*tracepb.Span
	Service string
}

// TraceID is the span's trace id in hex.
func (s Span) TraceID() string { return hex.EncodeToString(s.Span.TraceId) }

// ID is the span's id in hex.
func (s Span) ID() string { return hex.EncodeToString(s.SpanId) }

// ParentID is the id of the span's parent in hex, "" for a root span.
func (s Span) ParentID() string { return hex.EncodeToString(s.ParentSpanId) }

// Attr is the string value of the span's attribute key, "" without one.
func (s Span) Attr(key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// Receiver is the running receiver; URL is its base URL (exporters given
// it as OTEL_EXPORTER_OTLP_ENDPOINT add TracesPath).
type Receiver struct {
	*httptest.Server
	mu     sync.Mutex
	spans  []Span
	header http.Header // of the last export
}

// New starts a receiver, closed when the test ends. A request it cannot
// decode fails the test.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != TracesPath {
			http.Error(w, "not an OTLP traces export", http.StatusNotFound)
			return
		}
		export, err := decode(req)
		if err != nil {
			t.Errorf("OTLP receiver: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.keep(export, req.Header)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func decode(req *http.Request) (*coltracepb.ExportTraceServiceRequest, error) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var export coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &export); err != nil {
		return nil, err
	}
	return &export, nil
}

func (r *Receiver) keep(export *coltracepb.ExportTraceServiceRequest, header http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.header = header.Clone()
	for _, rs := range export.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				r.spans = append(r.spans, Span{Span: sp, Service: service})
			}
		}
	}
}

// Header is the HTTP header of the last export received (an exporter's
// OTEL_EXPORTER_OTLP_HEADERS arrive in it); nil before the first.
func (r *Receiver) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.header.Clone()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor polls until every name in names has a span, or timeout
// passes, and returns the spans received by then, by name (the last of
// each name wins).
func (r *Receiver) WaitFor(timeout time.Duration, names ...string) map[string]Span {
	deadline := time.Now().Add(timeout)
	for {
		byName := map[string]Span{}
		for _, s := range r.Spans() {
			byName[s.Name] = s
		}
		missing := false
		for _, n := range names {
			if _, ok := byName[n]; !ok {
				missing = true
			}
		}
		if !missing || time.Now().After(deadline) {
			return byName
		}
		time.Sleep(20 * time.Millisecond)
	}
}
