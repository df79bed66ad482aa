package server

import (
	"context"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
)

// traceparentTransport sends a W3C traceparent with every request, as a
// traced agent does.
type traceparentTransport struct{ traceparent string }

func (tp traceparentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	r.Header.Set("traceparent", tp.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}

// Each tool call is one span, exported over OTLP/HTTP to the endpoint
// configured; a call whose request brings a traceparent is a child of
// the caller's span, in the caller's trace.
func TestToolCallSpans(t *testing.T) {
	recv := otlptest.New(t)
	noEnv := func(string) string { return "" }
	tp, err := telemetry.NewTracerProvider(context.Background(), recv.URL, noEnv, "9.9.9")
	if err != nil || tp == nil {
		t.Fatalf("NewTracerProvider(%s): %v, %v", recv.URL, tp, err)
	}
	defer tp.Shutdown(context.Background())
	d := startDaemon(t, Config{TracerProvider: tp})
	os.WriteFile(filepath.Join(d.dir, "a.txt"), []byte("a\n"), 0o644)

	plain := d.connect(t, streamable)
	ok(t, plain, "Glob", map[string]any{"pattern": "*.txt"})
	fails(t, plain, "Bash", map[string]any{"command": "sudo id"})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	client := mcp.NewClient(&mcp.Implementation{Name: "traced", Version: "0"}, nil)
	traced, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   d.base + PathMCP,
		HTTPClient: &http.Client{Transport: traceparentTransport{"00-" + traceID + "-" + parentID + "-01"}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	ok(t, traced, "Read", map[string]any{"file_path": "a.txt"})

	// Over SSE the call's context comes with the POST that carries it.
	const sseTraceID, sseParentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	sseTraced, err := client.Connect(context.Background(), &mcp.SSEClientTransport{
		Endpoint:   d.base + PathSSE,
		HTTPClient: &http.Client{Transport: traceparentTransport{"00-" + sseTraceID + "-" + sseParentID + "-01"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sseTraced.Close()
	ok(t, sseTraced, "Grep", map[string]any{"pattern": "a"})

	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	spans := recv.Spans()
	if len(spans) != 4 {
		for _, sp := range spans {
			t.Logf("span %q", sp.Name)
		}
		t.Fatalf("received %d spans, want 4: one per tool call", len(spans))
	}
	byTool := map[string]otlptest.Span{}
	for _, sp := range spans {
		tool := sp.Attr("gen_ai.tool.name")
		byTool[tool] = sp
		if sp.Name != "tools/call "+tool {
			t.Errorf("span %q for tool %q", sp.Name, tool)
		}
		if sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: kind %v, want server", sp.Name, sp.Kind)
		}
		if sp.Service != "sandboxd" {
			t.Errorf("%s: service.name %q, want sandboxd", sp.Name, sp.Service)
		}
		if sp.Attr("sandboxd.request_id") == "" || sp.Attr("mcp.session.id") == "" {
			t.Errorf("%s: no request id or session: %v", sp.Name, sp.Attributes)
		}
	}
	for _, tool := range []string{"Glob", "Bash"} {
		sp := byTool[tool]
		if sp.Span == nil {
			t.Fatalf("no span for %s", tool)
		}
		if len(sp.ParentSpanId) != 0 || hex.EncodeToString(sp.TraceId) == traceID {
			t.Errorf("%s: a call without traceparent has parent %x in trace %x, want a root span of its own trace", tool, sp.ParentSpanId, sp.TraceId)
		}
	}
	if sp := byTool["Bash"]; sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || sp.Attr("sandboxd.refused") != "denylist" {
		t.Errorf("refused Bash: status %v, refused %q; want an error, refused by the denylist", sp.Status, sp.Attr("sandboxd.refused"))
	}
	if sp := byTool["Glob"]; sp.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("Glob's span is an error: %v", sp.Status)
	}
	sp := byTool["Read"]
	if sp.Span == nil {
		t.Fatal("no span for Read")
	}
	if got := hex.EncodeToString(sp.TraceId); got != traceID {
		t.Errorf("Read's trace %s, want the caller's %s", got, traceID)
	}
	if got := hex.EncodeToString(sp.ParentSpanId); got != parentID {
		t.Errorf("Read's parent %s, want the caller's span %s", got, parentID)
	}
	sp = byTool["Grep"]
	if sp.Span == nil {
		t.Fatal("no span for Grep")
	}
	if got, parent := hex.EncodeToString(sp.TraceId), hex.EncodeToString(sp.ParentSpanId); got != sseTraceID || parent != sseParentID {
		t.Errorf("Grep over SSE: trace %s parent %s, want the caller's %s and %s", got, parent, sseTraceID, sseParentID)
	}
}

// Without an endpoint, flag or variable, there is no tracing at all.
func TestTracingOffWhenUnset(t *testing.T) {
	tp, err := telemetry.NewTracerProvider(context.Background(), "", func(string) string { return "" }, "0")
	if tp != nil || err != nil {
		t.Errorf("NewTracerProvider with nothing set: %v, %v; want nil, nil", tp, err)
	}
	env := map[string]string{telemetry.EnvOTLPEndpoint: "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
	tp, err = telemetry.NewTracerProvider(context.Background(), "", func(k string) string { return env[k] }, "0")
	if tp != nil || err != nil {
		t.Errorf("NewTracerProvider with OTEL_SDK_DISABLED=true: %v, %v; want nil, nil", tp, err)
	}
	for _, bad := range []string{"127.0.0.1:4318", "ftp://x", "http://"} {
		if _, err := telemetry.NewTracerProvider(context.Background(), bad, func(string) string { return "" }, "0"); err == nil {
			t.Errorf("--otlp-endpoint %q accepted", bad)
		}
	}
}
