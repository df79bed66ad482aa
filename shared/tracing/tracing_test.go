package tracing

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// Without a span a backend's span is a no-op.
func TestNoSpanNoTrace(t *testing.T) {
	ctx := context.Background()
	_, span := StartCall(ctx, "direct", "sh")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("StartCall without a span in ctx made a real span")
	}
	if SpanName("direct") != "direct.exec" || SpanName("kubectl_exec") != "kubectl.exec" {
		t.Errorf("SpanName: %s, %s", SpanName("direct"), SpanName("kubectl_exec"))
	}
	End(span, errors.New("x")) // must not panic
}

func TestPluginEnv(t *testing.T) {
	got := PluginEnv([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "HOME=/root", "OTEL_SERVICE_NAME=x",
		"MY_OTEL_THING=1", "OTEL_BROKEN", "AWS_SECRET_ACCESS_KEY=k"})
	want := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SERVICE_NAME=x"}
	if !slices.Equal(got, want) {
		t.Errorf("PluginEnv = %q, want %q", got, want)
	}
}

func TestNewProviderFromEnvOff(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no endpoint": {},
		"disabled":    {EnvOTLPEndpoint: "http://127.0.0.1:4318", EnvSDKDisabled: "true"},
	} {
		tp, err := NewProviderFromEnv(context.Background(), "s", "1", func(k string) string { return env[k] })
		if tp != nil || err != nil {
			t.Errorf("%s: %v, %v; want no provider", name, tp, err)
		}
	}
}
