package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The standard variables that turn tracing on (the exporter reads them,
// and the rest of OTEL_EXPORTER_OTLP_*, itself).
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envSDKDisabled        = "OTEL_SDK_DISABLED"
)

// tracesPath is the OTLP/HTTP path for traces, added to an --otlp-endpoint
// without a path.
const tracesPath = "/v1/traces"

// NewTracerProvider exports spans over OTLP/HTTP (protobuf) when an
// endpoint is configured: endpoint, a URL (e.g. --otlp-endpoint
// http://127.0.0.1:4318, to which /v1/traces is added when it has no
// path), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT from getenv. With none, or with
// OTEL_SDK_DISABLED=true, it returns nil: no tracing. Shut the provider
// down at exit to send what it holds. The resource names the service
// sandboxd at version; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// override it.
func NewTracerProvider(ctx context.Context, endpoint string, getenv func(string) string, version string) (*sdktrace.TracerProvider, error) {
	if strings.EqualFold(strings.TrimSpace(getenv(envSDKDisabled)), "true") {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		u, err := EndpointURL(endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	} else if getenv(EnvOTLPTracesEndpoint) == "" && getenv(EnvOTLPEndpoint) == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "sandboxd"), attribute.String("service.version", version)),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// EndpointURL checks an OTLP/HTTP endpoint given as a flag and adds the
// traces path when it has none.
func EndpointURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL, e.g. http://127.0.0.1:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}
