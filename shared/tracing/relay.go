package tracing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

// UnixScheme prefixes an endpoint that is a Relay's unix socket.
const UnixScheme = "unix:"

// TracesPath is the OTLP/HTTP path of traces, the only one a Relay
// passes, and the one added to an endpoint given without a path.
const TracesPath = "/v1/traces"

// unixHost stands for the socket in the URLs sent over it.
const unixHost = "otlp-relay"

// maxRelayBody bounds one export a Relay passes on: the SDK's batches
// are far smaller, and a process in the container must not be able to
// make this one buffer without limit.
const maxRelayBody = 4 << 20

// unixClient sends every request to the socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

// ExportURL is the OTLP/HTTP traces URL getenv's OTEL_* variables
// configure, "" when they configure none (or OTEL_SDK_DISABLED=true):
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added, as the exporter
// itself does.
func ExportURL(getenv func(string) string) string {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return ""
	}
	u, v := otlpSetting(getenv, "ENDPOINT")
	if v == EnvOTLPEndpoint {
		return strings.TrimSuffix(u, "/") + TracesPath
	}
	return u
}

// Relay passes OTLP/HTTP trace exports from a unix socket to a
// collector. A sandbox without a network (a codegen container) exports
// its spans to the socket, bind-mounted into it; the relay, on the host,
// reaches the collector. It passes a POST to /v1/traces and nothing
// else, bodies bounded, so the socket is no way out for anything but
// spans, and only to the collector the host exports to itself.
type Relay struct {
	ln  net.Listener
	srv *http.Server
}

// NewRelay listens on a unix socket at path (mode 0666: the sandbox's
// user is not the host's) and relays to target, an http(s) traces URL.
func NewRelay(path, target string) (*Relay, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otlp relay: collector %q: want an http:// or https:// URL", target)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("otlp relay: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // #nosec G302 -- the sandbox's user is not the host's (see NewRelay); the relay passes trace POSTs only
		_ = ln.Close()
		return nil, fmt.Errorf("otlp relay: %w", err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = u
			r.Out.Host = u.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "otlp relay: collector unreachable", http.StatusBadGateway)
		},
	}
	r := &Relay{ln: ln, srv: &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodPost || req.URL.Path != TracesPath {
				http.Error(w, "otlp relay: only POST "+TracesPath, http.StatusNotFound)
				return
			}
			req.Body = http.MaxBytesReader(w, req.Body, maxRelayBody)
			proxy.ServeHTTP(w, req)
		}),
	}}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Close stops relaying; exports in flight are cut.
func (r *Relay) Close() error {
	err := r.srv.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
