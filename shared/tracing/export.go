package tracing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The standard variables that turn export on; the exporter reads them and
// the rest of OTEL_EXPORTER_OTLP_* itself.
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvSDKDisabled        = "OTEL_SDK_DISABLED"
)

// EnvPrefix begins every variable PluginEnv passes to a plugin.
const EnvPrefix = "OTEL_"

// batchTimeout is how long a span waits to be sent with others. Short:
// a plugin is stopped within seconds of its last call, and what it holds
// must be out by then (Shutdown sends the rest).
const batchTimeout = time.Second

// NewProviderFromEnv exports spans over OTLP/HTTP (protobuf) to
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT
// (to which /v1/traces is added), as getenv reads them. With neither, or
// with OTEL_SDK_DISABLED=true, it returns nil: no tracing. The resource
// names the service and version; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override them. Shut the provider down at exit
// to send what it still holds.
func NewProviderFromEnv(ctx context.Context, service, version string, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	return NewProvider(ctx, service, version, "", getenv)
}

// NewProvider is NewProviderFromEnv with an endpoint URL that, when not
// empty, takes the place of the environment's (a flag's: the traces URL
// itself, path included). "unix:PATH" sends to a Relay's socket instead:
// how a process in a container without a network exports.
func NewProvider(ctx context.Context, service, version, endpointURL string, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	switch {
	case strings.HasPrefix(endpointURL, UnixScheme):
		opts = append(opts, otlptracehttp.WithHTTPClient(unixClient(strings.TrimPrefix(endpointURL, UnixScheme))),
			otlptracehttp.WithEndpointURL("http://"+unixHost+TracesPath))
	case endpointURL != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(endpointURL))
	case getenv(EnvOTLPTracesEndpoint) == "" && getenv(EnvOTLPEndpoint) == "":
		return nil, nil
	}
	// The exporter reads the rest of the process's environment itself;
	// getenv only decides whether there is anything to export to.
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service), attribute.String("service.version", version)),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(batchTimeout)), sdktrace.WithResource(res)), nil
}

// PluginEnv picks from environ (os.Environ's form) the OTEL_* variables,
// which a host passes on to the plugins it starts so that they export
// where it does. Nothing else of the host's environment is passed: a
// plugin gets only what its protocol needs.
func PluginEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, EnvPrefix) && strings.Contains(kv, "=") {
			out = append(out, kv)
		}
	}
	return out
}
