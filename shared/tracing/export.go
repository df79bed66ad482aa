package tracing

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The standard variables that turn export on; the exporter reads the
// rest of OTEL_EXPORTER_OTLP_* (headers, timeout, compression, TLS).
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
	var client *http.Client
	u := endpointURL
	switch {
	case strings.HasPrefix(endpointURL, UnixScheme):
		client = unixClient(strings.TrimPrefix(endpointURL, UnixScheme))
		u = "http://" + unixHost + TracesPath
	case endpointURL == "":
		if u = ExportURL(getenv); u == "" {
			return nil, nil
		}
	}
	// A setting that cannot be used is reported and left out, as the
	// specification asks: tracing must not stop what it traces.
	warn := func(err error) { otel.Handle(fmt.Errorf("tracing: %w", err)) }
	cfg := readOTLPConfig(u, getenv, warn)
	if client == nil {
		client = otlpClient(getenv, warn)
	}
	exp := newOTLPExporter(cfg, client)
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
