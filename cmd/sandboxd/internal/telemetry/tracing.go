package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// The standard variables that turn tracing on (shared/tracing's).
const (
	EnvOTLPEndpoint       = tracing.EnvOTLPEndpoint
	EnvOTLPTracesEndpoint = tracing.EnvOTLPTracesEndpoint
)

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
	var u string
	if endpoint != "" {
		var err error
		if u, err = EndpointURL(endpoint); err != nil {
			return nil, err
		}
	}
	return tracing.NewProvider(ctx, "sandboxd", version, u, getenv)
}

// EndpointURL checks an OTLP/HTTP endpoint given as a flag and adds the
// traces path when it has none.
func EndpointURL(endpoint string) (string, error) {
	if path, ok := strings.CutPrefix(endpoint, tracing.UnixScheme); ok {
		if !filepath.IsAbs(path) {
			return "", fmt.Errorf("--otlp-endpoint %q: want unix:/ABSOLUTE/PATH", endpoint)
		}
		return endpoint, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL, e.g. http://127.0.0.1:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracing.TracesPath
	}
	return u.String(), nil
}
