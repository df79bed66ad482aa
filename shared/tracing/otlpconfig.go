package tracing

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// otlpConfig is where and how the exporter sends: the traces URL and
// what the standard OTEL_EXPORTER_OTLP_* variables say of headers,
// timeout and compression. Each has a TRACES_ form that wins over the
// general one, as the specification says.
type otlpConfig struct {
	url     string
	headers map[string]string
	timeout time.Duration
	gzip    bool
}

// defaultOTLPTimeout is the specification's default export timeout.
const defaultOTLPTimeout = 10 * time.Second

// otlpSetting is the value of OTEL_EXPORTER_OTLP_TRACES_<name>, else of
// OTEL_EXPORTER_OTLP_<name>.
func otlpSetting(getenv func(string) string, name string) (value, variable string) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return s, v
		}
	}
	return "", ""
}

// readOTLPConfig reads the settings for sending to url. A value that
// cannot be used is left out, as the specification asks (a warning, and
// the setting treated as unset), and reported to warn, naming its
// variable (never a header's value, which may be a key).
func readOTLPConfig(u string, getenv func(string) string, warn func(error)) otlpConfig {
	cfg := otlpConfig{url: u, timeout: defaultOTLPTimeout}
	if s, v := otlpSetting(getenv, "HEADERS"); s != "" {
		h, err := parseOTLPHeaders(s)
		if err != nil {
			warn(fmt.Errorf("%s: %w", v, err))
		}
		cfg.headers = h
	}
	if s, v := otlpSetting(getenv, "TIMEOUT"); s != "" {
		if ms, err := strconv.Atoi(s); err != nil || ms <= 0 {
			warn(fmt.Errorf("%s=%q: want a positive number of milliseconds; using %v", v, s, defaultOTLPTimeout))
		} else {
			cfg.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	switch s, v := otlpSetting(getenv, "COMPRESSION"); s {
	case "", "none":
	case "gzip":
		cfg.gzip = true
	default:
		warn(fmt.Errorf("%s=%q: want gzip or none; sending uncompressed", v, s))
	}
	return cfg
}

// parseOTLPHeaders reads "key=value,key2=value2", each key and value
// percent-encoded (the W3C baggage form the specification names). An
// entry it cannot read is left out, and the first such is reported.
func parseOTLPHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	var bad error
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		key, kerr := url.PathUnescape(strings.TrimSpace(k))
		val, verr := url.PathUnescape(strings.TrimSpace(v))
		switch {
		case !ok:
			// The entry may be a secret: say what is wrong, not what it is.
			bad = cmp.Or(bad, errors.New("an entry without '=' is left out (entries are key=value, separated by commas)"))
		case kerr != nil || key == "":
			bad = cmp.Or(bad, errors.New("an entry whose key is not a percent-encoded name is left out"))
		case verr != nil:
			bad = cmp.Or(bad, fmt.Errorf("the value of %q is not percent-encoded: left out", key))
		default:
			h[key] = val
		}
	}
	return h, bad
}

// otlpClient is the HTTP client for an https or http endpoint, with the
// TLS the CERTIFICATE (trusted roots), CLIENT_CERTIFICATE and
// CLIENT_KEY variables give (PEM files). One it cannot use is reported
// to warn and left out: an export that needs it then fails, and says so.
func otlpClient(getenv func(string) string, warn func(error)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	custom := false
	if file, v := otlpSetting(getenv, "CERTIFICATE"); file != "" {
		pool := x509.NewCertPool()
		switch pem, err := os.ReadFile(file); { // #nosec G304 G703 -- the CA file the operator names in the standard variable
		case err != nil:
			warn(fmt.Errorf("%s: %w", v, err))
		case !pool.AppendCertsFromPEM(pem):
			warn(fmt.Errorf("%s: %s holds no PEM certificate", v, file))
		default:
			tc.RootCAs, custom = pool, true
		}
	}
	certFile, cv := otlpSetting(getenv, "CLIENT_CERTIFICATE")
	keyFile, kv := otlpSetting(getenv, "CLIENT_KEY")
	switch {
	case certFile != "" && keyFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			warn(fmt.Errorf("%s and %s: %w", cv, kv, err))
			break
		}
		tc.Certificates, custom = []tls.Certificate{cert}, true
	case certFile != "":
		warn(fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_KEY: no client certificate", cv))
	case keyFile != "":
		warn(fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: no client certificate", kv))
	}
	if custom {
		tr.TLSClientConfig = tc
	}
	return &http.Client{Transport: tr}
}
