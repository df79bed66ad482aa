package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// routes maps host:port names to loopback addresses, standing in for
// DNS: the proxy's tests never leave loopback.
type routes struct {
	mu    sync.Mutex
	to    map[string]string
	dials []string
}

func (r *routes) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	r.dials = append(r.dials, addr)
	target, ok := r.to[addr]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("test: no route to %s", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func (r *routes) dialed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dials...)
}

// hostOf is the host:port a test server listens on.
func hostOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// startProxy serves a proxy on a loopback port until the test ends, and
// checks that Serve then returns nil.
func startProxy(t *testing.T, opts Options) (*Proxy, *url.URL) {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, &url.URL{Scheme: "http", Host: l.Addr().String()}
}

// client is an HTTP client that goes through the proxy and trusts only
// roots for TLS.
func client(t *testing.T, proxy *url.URL, roots *x509.CertPool) *http.Client {
	t.Helper()
	tr := &http.Transport{
		Proxy:              http.ProxyURL(proxy),
		TLSClientConfig:    &tls.Config{RootCAs: roots},
		DisableCompression: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get fetches u (with the header set, if any) and returns the response
// and its whole body.
func get(t *testing.T, c *http.Client, u string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vv := range header {
		req.Header[k] = vv
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: body: %v", u, err)
	}
	return resp, string(body)
}

// seen records what an upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Clone(context.Background()))
	s.mu.Unlock()
}

func (s *seen) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// echo is an upstream that answers with the request's host, path and
// Authorization, in the body and in a header.
func echo(s *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo-Auth", auth)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(w, "host=%s path=%s auth=%s\n", r.Host, r.URL.RequestURI(), auth)
	})
}

// secrets is an Options.Secret over a map.
func secrets(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// rawConnect sends a CONNECT for target to the proxy and returns the
// connection and the proxy's response.
func rawConnect(t *testing.T, proxy *url.URL, target string) (net.Conn, *http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", proxy.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		t.Fatal(err)
	}
	br := newByteReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	body := ""
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("CONNECT %s: body: %v", target, err)
		}
		body = string(b)
	}
	return c, resp, body
}

// quietTLSServer is httptest.NewTLSServer without the log line of a
// handshake a test makes fail on purpose.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

// newByteReader reads c a byte at a time, so that reading a CONNECT's
// response takes nothing of what the tunnel carries after it.
func newByteReader(c net.Conn) *bufio.Reader { return bufio.NewReader(oneByte{c}) }

type oneByte struct{ r io.Reader }

func (o oneByte) Read(b []byte) (int, error) {
	if len(b) > 1 {
		b = b[:1]
	}
	return o.r.Read(b)
}
