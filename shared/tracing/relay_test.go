package tracing

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
)

// A process that can reach only a unix socket exports through a Relay
// to the collector, with the trace context its environment carried.
func TestRelayCarriesSpans(t *testing.T) {
	recv := otlptest.New(t)
	sock := filepath.Join(t.TempDir(), "otlp.sock")
	r, err := NewRelay(sock, recv.URL+otlptest.TracesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled,
	})
	env := ContextEnv(trace.ContextWithSpanContext(context.Background(), parent))
	if len(env) != 1 || !strings.HasPrefix(env[0], EnvTraceParent+"=00-01020300") {
		t.Fatalf("ContextEnv = %q", env)
	}
	getenv := func(k string) string {
		for _, kv := range env {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
	ctx := ExtractEnv(context.Background(), getenv)

	tp, err := NewProvider(context.Background(), "relayed", "0", UnixScheme+sock, func(string) string { return "" })
	if err != nil || tp == nil {
		t.Fatalf("NewProvider(unix:): %v, %v", tp, err)
	}
	_, span := tp.Tracer("t").Start(ctx, "in.the.box")
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := recv.WaitFor(5*time.Second, "in.the.box")["in.the.box"]
	if got.TraceID() != parent.TraceID().String() || got.ParentID() != parent.SpanID().String() {
		t.Errorf("relayed span: trace %s parent %s, want %s %s", got.TraceID(), got.ParentID(), parent.TraceID(), parent.SpanID())
	}
}

// The relay passes trace exports and nothing else.
func TestRelayRefusesTheRest(t *testing.T) {
	recv := otlptest.New(t)
	sock := filepath.Join(t.TempDir(), "otlp.sock")
	r, err := NewRelay(sock, recv.URL+otlptest.TracesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/v1/traces"},
		{http.MethodPost, "/v1/metrics"},
		{http.MethodPost, "/../v1/logs"},
	} {
		req, _ := http.NewRequest(tc.method, "http://relay"+tc.path, strings.NewReader("x"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", tc.method, tc.path, resp.StatusCode)
		}
	}
	if _, err := NewRelay(filepath.Join(t.TempDir(), "x.sock"), "file:///etc/passwd"); err == nil {
		t.Error("NewRelay to a file URL: no error")
	}
}

func TestExportURL(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{EnvOTLPEndpoint: "http://127.0.0.1:4318/"}, "http://127.0.0.1:4318/v1/traces"},
		{map[string]string{EnvOTLPEndpoint: "http://a:1", EnvOTLPTracesEndpoint: "http://b:2/t"}, "http://b:2/t"},
		{map[string]string{EnvOTLPEndpoint: "http://a:1", EnvSDKDisabled: "true"}, ""},
	} {
		if got := ExportURL(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("ExportURL(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
