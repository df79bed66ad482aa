package tracing

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestExportReachesACollector: spans go to an OTLP/HTTP receiver that
// decodes them as the collector's ExportTraceServiceRequest, gzipped,
// with the configured headers, and every field as the specification
// maps it: status codes renumbered, a remote parent flagged, attributes
// of each type, events and links.
func TestExportReachesACollector(t *testing.T) {
	r := otlptest.New(t)
	tp, err := NewProvider(context.Background(), "svc", "1.2", "", envOf(map[string]string{
		EnvOTLPEndpoint:                     r.URL + "/",
		"OTEL_EXPORTER_OTLP_HEADERS":        "x-general=no",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-tenant=a%20b, authorization=Bearer%20t%3Dk",
		"OTEL_EXPORTER_OTLP_COMPRESSION":    "gzip",
	}))
	if err != nil || tp == nil {
		t.Fatalf("NewProvider: %v, %v", tp, err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	_, span := tp.Tracer("scope-a").Start(ctx, "op", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.Int("n", 1)}}),
		trace.WithAttributes(
			attribute.String("s", "v"), attribute.Int64("i", -3), attribute.Float64("f", 1.5), attribute.Bool("b", true),
			attribute.StringSlice("ss", []string{"x", "y"}), attribute.Int64Slice("is", []int64{1, 2}),
			attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{false}),
		))
	span.AddEvent("ev", trace.WithAttributes(attribute.String("k", "v")))
	span.SetStatus(codes.Error, "it broke")
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	got := r.WaitFor(5*time.Second, "op")["op"]
	if got.Span == nil {
		t.Fatal("no span received")
	}
	if got.Service != "svc" {
		t.Errorf("service %q, want svc", got.Service)
	}
	h := r.Header()
	if h.Get("X-Tenant") != "a b" || h.Get("Authorization") != "Bearer t=k" || h.Get("X-General") != "" {
		t.Errorf("headers %v: want the TRACES_ ones, decoded, and not the general ones", h)
	}
	if h.Get("Content-Encoding") != "gzip" || h.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("headers %v: want a gzipped protobuf body", h)
	}
	sc := span.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	want := &tracepb.Span{
		TraceId: tid[:], SpanId: sid[:], ParentSpanId: []byte{4, 5, 0, 0, 0, 0, 0, 0},
		Flags: 0x1 | 0x100 | 0x200, Name: "op", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: got.StartTimeUnixNano, EndTimeUnixNano: got.EndTimeUnixNano,
		Attributes: []*commonpb.KeyValue{
			kvOf("s", &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}}),
			kvOf("i", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -3}}),
			kvOf("f", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 1.5}}),
			kvOf("b", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
			kvOf("ss", arrayValue(
				&commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "x"}},
				&commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "y"}})),
			kvOf("is", arrayValue(
				&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 1}},
				&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 2}})),
			kvOf("fs", arrayValue(&commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.5}})),
			kvOf("bs", arrayValue(&commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}})),
		},
		Events: []*tracepb.Span_Event{{
			TimeUnixNano: got.Events[0].GetTimeUnixNano(), Name: "ev",
			Attributes: []*commonpb.KeyValue{kvOf("k", &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}})},
		}},
		Links: []*tracepb.Span_Link{{
			TraceId: []byte{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, SpanId: []byte{8, 0, 0, 0, 0, 0, 0, 0},
			Attributes: []*commonpb.KeyValue{kvOf("n", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 1}})},
			Flags:      0x100,
		}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "it broke"},
	}
	if !proto.Equal(want, got.Span) {
		t.Errorf("the span received:\n%s\nwant:\n%s", prototext.Format(got.Span), prototext.Format(want))
	}
	if got.StartTimeUnixNano == 0 || got.EndTimeUnixNano < got.StartTimeUnixNano {
		t.Errorf("times %d..%d", got.StartTimeUnixNano, got.EndTimeUnixNano)
	}
}

func kvOf(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func arrayValue(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}

// TestStatusAndGrouping: OK and unset statuses are renumbered and carry
// no message; spans of two scopes on one resource make one
// ResourceSpans with two ScopeSpans, in the order they came.
func TestStatusAndGrouping(t *testing.T) {
	if got := statusOf(codes.Ok, "ignored"); got.Code != tracepb.Status_STATUS_CODE_OK || got.Message != "" {
		t.Errorf("Ok: %v", got)
	}
	if got := statusOf(codes.Unset, "ignored"); got.Code != tracepb.Status_STATUS_CODE_UNSET || got.Message != "" {
		t.Errorf("Unset: %v", got)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	for _, scope := range []string{"b", "a", "b"} {
		_, s := tp.Tracer(scope).Start(context.Background(), "in-"+scope)
		s.End()
	}
	td := tracesData(exp.GetSpans().Snapshots()) // before Shutdown, which empties exp
	if len(td.ResourceSpans) != 1 {
		t.Fatalf("%d ResourceSpans, want 1", len(td.ResourceSpans))
	}
	var scopes []string
	for _, ss := range td.ResourceSpans[0].ScopeSpans {
		scopes = append(scopes, ss.Scope.Name+":"+itoa(len(ss.Spans)))
	}
	if strings.Join(scopes, " ") != "b:2 a:1" {
		t.Errorf("scopes %v, want b:2 a:1", scopes)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestExportRetries: a collector that answers 503 is tried again (after
// the Retry-After it asks for), one that answers 400 is not, and its
// answer is quoted in the error.
func TestExportRetries(t *testing.T) {
	var calls atomic.Int32
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if code := int(status.Swap(http.StatusOK)); code != http.StatusOK {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy now", code)
		}
	}))
	defer srv.Close()
	e := newOTLPExporter(readOTLPConfig(srv.URL+TracesPath, envOf(nil), noWarning(t)), srv.Client())
	spans := oneSpan(t)

	status.Store(http.StatusServiceUnavailable)
	start := time.Now()
	if err := e.ExportSpans(context.Background(), spans); err != nil || calls.Load() != 2 {
		t.Fatalf("after a 503: err %v, %d requests; want it sent on the second", err, calls.Load())
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("tried again after %v, want the 1s Retry-After", d)
	}

	calls.Store(0)
	status.Store(http.StatusBadRequest)
	err := e.ExportSpans(context.Background(), spans)
	if err == nil || calls.Load() != 1 || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "busy now") {
		t.Fatalf("after a 400: err %v, %d requests; want one, quoted", err, calls.Load())
	}

	_ = e.Shutdown(context.Background())
	if err := e.ExportSpans(context.Background(), spans); !errors.Is(err, errExporterStopped) {
		t.Errorf("after Shutdown: %v", err)
	}
}

// TestExportOverTLS: an https collector is trusted through
// OTEL_EXPORTER_OTLP_CERTIFICATE, and refused without it.
func TestExportOverTLS(t *testing.T) {
	var got atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		sent bool
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": caFile}, true},
		{nil, false},
	} {
		client := otlpClient(envOf(tc.env), noWarning(t))
		cfg := readOTLPConfig(srv.URL+TracesPath, envOf(map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "300"}), noWarning(t))
		got.Store(0)
		err := newOTLPExporter(cfg, client).ExportSpans(context.Background(), oneSpan(t))
		if sent := err == nil && got.Load() == 1; sent != tc.sent {
			t.Errorf("env %v: err %v, %d requests; want sent %v", tc.env, err, got.Load(), tc.sent)
		}
	}
}

// TestUnusableSettingsAreLeftOut: a setting that cannot be used is
// reported, naming its variable and never a header's value, and treated
// as unset, as the specification asks; the usable ones around it stay.
func TestUnusableSettingsAreLeftOut(t *testing.T) {
	var warned []string
	warn := func(err error) { warned = append(warned, err.Error()) }
	cfg := readOTLPConfig("http://127.0.0.1:1/v1/traces", envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_TIMEOUT":            "soon",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd",
		"OTEL_EXPORTER_OTLP_HEADERS":            "Bearer-secret-token,x-kept=1,=nokey",
	}), warn)
	if cfg.timeout != defaultOTLPTimeout || cfg.gzip || len(cfg.headers) != 1 || cfg.headers["x-kept"] != "1" {
		t.Errorf("config %+v: want the defaults and x-kept alone", cfg)
	}
	otlpClient(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/cert.pem",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":        "/nonexistent.pem",
	}), warn)
	want := []string{
		"OTEL_EXPORTER_OTLP_HEADERS: an entry without '=' is left out (entries are key=value, separated by commas)",
		`OTEL_EXPORTER_OTLP_TIMEOUT="soon": want a positive number of milliseconds; using 10s`,
		`OTEL_EXPORTER_OTLP_TRACES_COMPRESSION="zstd": want gzip or none; sending uncompressed`,
		"OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent.pem: no such file or directory",
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY: no client certificate",
	}
	if strings.Join(warned, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}
}

// noWarning fails the test on any warning about the settings.
func noWarning(t *testing.T) func(error) {
	return func(err error) { t.Errorf("unexpected warning: %v", err) }
}

func oneSpan(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, s := tp.Tracer("t").Start(context.Background(), "one")
	s.End()
	spans := exp.GetSpans().Snapshots() // before Shutdown, which empties exp
	if len(spans) != 1 {
		t.Fatalf("%d spans recorded", len(spans))
	}
	return spans
}
