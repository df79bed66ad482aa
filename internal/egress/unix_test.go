package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestServeUnixSocket serves the proxy on a unix socket, the channel a
// sandbox is given, and goes through it to a tunnelled host and an
// intercepted one; then checks that nothing it started is left running.
func TestServeUnixSocket(t *testing.T) {
	before := runtime.NumGoroutine()
	serveUnixSocket(t)
	deadline := time.Now().Add(10 * time.Second) // generous: exiting goroutines take a moment
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left running, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func serveUnixSocket(t *testing.T) {
	var up seen
	srv := quietTLSServer(echo(&up))
	defer srv.Close()
	upRoots := x509.NewCertPool()
	upRoots.AddCert(srv.Certificate())
	rt := &routes{to: map[string]string{"example.com:443": hostOf(t, srv), "api.example.com:443": hostOf(t, srv)}}
	p, err := New(Options{
		Rules:         []Rule{{Host: "example.com"}, tokenRule},
		Secret:        secrets(map[string]string{"TOKEN": secretValue}),
		Dial:          rt.dial,
		UpstreamRoots: upRoots,
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "egress.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	roots.AppendCertsFromPEM(p.CACertPEM())
	tr := &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "egress.invalid"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for u, want := range map[string]string{
		"https://example.com/a":     "host=example.com path=/a auth=\n",
		"https://api.example.com/b": "host=api.example.com path=/b auth=Bearer [REDACTED:secret:TOKEN]\n",
	} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("GET %s = %d %q, want 200 %q", u, resp.StatusCode, body, want)
		}
	}
}
