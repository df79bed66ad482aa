package egress

import (
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestHTTPAllowed(t *testing.T) {
	var up seen
	srv := httptest.NewServer(echo(&up))
	defer srv.Close()
	rt := &routes{to: map[string]string{"pkg.example:80": hostOf(t, srv)}}
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "pkg.example"}}, Dial: rt.dial})
	proxy.User = url.UserPassword("sandbox", "pw") // sent as Proxy-Authorization
	c := client(t, proxy, nil)

	hdr := http.Header{"Connection": {"X-Hop"}, "X-Hop": {"1"}, "X-Kept": {"2"}}
	resp, body := get(t, c, "http://PKG.example./mod/@v/list?x=1", hdr)
	if resp.StatusCode != http.StatusOK || body != "host=pkg.example path=/mod/@v/list?x=1 auth=\n" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	reqs := up.all()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests, want 1", len(reqs))
	}
	h := reqs[0].Header
	for _, k := range []string{"Proxy-Authorization", "X-Hop"} {
		if v, ok := h[k]; ok {
			t.Errorf("upstream saw %s: %q", k, v)
		}
	}
	if h.Get("X-Kept") != "2" {
		t.Errorf("upstream saw X-Kept %q, want 2", h.Get("X-Kept"))
	}
}

func TestHTTPHostHeaderIsTheURLs(t *testing.T) {
	// A Host header that disagrees with the absolute URL does not reach
	// the upstream: the proxy judges and sends the URL's host (RFC 9112
	// 3.2.2; net/http drops the header before the handler sees it). A Go
	// client cannot even send this: it writes req.Host into the URL.
	var up seen
	srv := httptest.NewServer(echo(&up))
	defer srv.Close()
	rt := &routes{to: map[string]string{"pkg.example:80": hostOf(t, srv)}}
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "pkg.example"}}, Dial: rt.dial})
	c, err := net.Dial("tcp", proxy.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, "GET http://pkg.example/x HTTP/1.1\r\nHost: internal.example\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(newByteReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "host=pkg.example path=/x auth=\n" {
		t.Fatalf("got %q", body)
	}
	if d := rt.dialed(); len(d) != 1 || d[0] != "pkg.example:80" {
		t.Errorf("dialled %v, want [pkg.example:80]", d)
	}
}

func TestHTTPDenied(t *testing.T) {
	rt := &routes{}
	rules := []Rule{{Host: "proxy.golang.org"}, {Host: "api.github.com", Port: 443}}
	_, proxy := startProxy(t, Options{Rules: rules, Dial: rt.dial})
	c := client(t, proxy, nil)
	for _, u := range []string{"http://example.com/", "http://api.github.com/", "http://proxy.golang.org:8080/"} {
		resp, body := get(t, c, u, nil)
		target := strings.TrimPrefix(strings.TrimSuffix(u, "/"), "http://")
		if !strings.Contains(target, ":") {
			target += ":80"
		}
		want := "promptkit-sandbox egress: " + target + " is not allowed by this sandbox's egress policy (allowed: proxy.golang.org, api.github.com:443)\n"
		if resp.StatusCode != http.StatusForbidden || body != want {
			t.Errorf("GET %s = %d %q\nwant 403 %q", u, resp.StatusCode, body, want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
	}
	if d := rt.dialed(); len(d) != 0 {
		t.Errorf("a refused request dialled %v", d)
	}
}

func TestHTTPDeniedWithoutRules(t *testing.T) {
	_, proxy := startProxy(t, Options{Dial: (&routes{}).dial})
	resp, body := get(t, client(t, proxy, nil), "http://proxy.golang.org/", nil)
	want := "promptkit-sandbox egress: proxy.golang.org:80 is not allowed by this sandbox's egress policy (allowed: none)\n"
	if resp.StatusCode != http.StatusForbidden || body != want {
		t.Errorf("got %d %q, want 403 %q", resp.StatusCode, body, want)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	_, proxy := startProxy(t, Options{Dial: (&routes{}).dial})
	resp, body := get(t, http.DefaultClient, proxy.String()+"/x", nil)
	want := "promptkit-sandbox egress: this is an HTTP proxy: send requests with an absolute URL (http://host/path), or CONNECT for HTTPS\n"
	if resp.StatusCode != http.StatusBadRequest || body != want {
		t.Errorf("got %d %q, want 400 %q", resp.StatusCode, body, want)
	}
}

func TestConnectAllowed(t *testing.T) {
	var up seen
	srv := quietTLSServer(echo(&up))
	defer srv.Close()
	rt := &routes{to: map[string]string{"example.com:443": hostOf(t, srv)}}
	p, proxy := startProxy(t, Options{Rules: []Rule{{Host: "example.com"}}, Dial: rt.dial})
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	resp, body := get(t, client(t, proxy, roots), "https://example.com/ok", nil)
	if resp.StatusCode != http.StatusOK || body != "host=example.com path=/ok auth=\n" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	// End to end: the client saw the upstream's own certificate.
	if got := resp.TLS.PeerCertificates[0]; !got.Equal(srv.Certificate()) {
		t.Errorf("client saw a certificate from %q, not the upstream's", got.Issuer)
	}
	// And a client that trusts only the proxy's CA does not get through.
	mine := x509.NewCertPool()
	mine.AppendCertsFromPEM(p.CACertPEM())
	if _, err := client(t, proxy, mine).Get("https://example.com/"); err == nil {
		t.Error("a client trusting only the proxy's CA reached a tunnelled host")
	}
}

func TestConnectDenied(t *testing.T) {
	rt := &routes{}
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "proxy.golang.org"}}, Dial: rt.dial})
	_, resp, body := rawConnect(t, proxy, "example.com:443")
	want := "promptkit-sandbox egress: example.com:443 is not allowed by this sandbox's egress policy (allowed: proxy.golang.org)\n"
	if resp.StatusCode != http.StatusForbidden || body != want {
		t.Errorf("got %d %q, want 403 %q", resp.StatusCode, body, want)
	}
	_, resp, body = rawConnect(t, proxy, "proxy.golang.org:22")
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(body, "promptkit-sandbox egress: proxy.golang.org:22 is not allowed") {
		t.Errorf("port 22: got %d %q", resp.StatusCode, body)
	}
	// A Go client reports the refusal as an error.
	if _, err := client(t, proxy, nil).Get("https://example.com/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("client error = %v, want Forbidden", err)
	}
	if d := rt.dialed(); len(d) != 0 {
		t.Errorf("a refused CONNECT dialled %v", d)
	}
}

func TestConnectBadTarget(t *testing.T) {
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "example.com"}}, Dial: (&routes{}).dial})
	_, resp, body := rawConnect(t, proxy, "example.com")
	want := "promptkit-sandbox egress: bad CONNECT target: \"example.com\" is not host:port\n"
	if resp.StatusCode != http.StatusBadRequest || body != want {
		t.Errorf("got %d %q, want 400 %q", resp.StatusCode, body, want)
	}
}

func TestUpstreamDown(t *testing.T) {
	rt := &routes{} // no route: the dial fails
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "example.com"}}, Dial: rt.dial})
	_, resp, body := rawConnect(t, proxy, "example.com:443")
	want := "promptkit-sandbox egress: example.com:443 did not answer: test: no route to example.com:443\n"
	if resp.StatusCode != http.StatusBadGateway || body != want {
		t.Errorf("got %d %q, want 502 %q", resp.StatusCode, body, want)
	}
}

func TestDefaultDialerRefusesLoopback(t *testing.T) {
	_, proxy := startProxy(t, Options{Rules: []Rule{{Host: "localhost"}, {Host: "127.0.0.1"}}})
	for _, host := range []string{"localhost", "127.0.0.1"} {
		_, resp, body := rawConnect(t, proxy, host+":443")
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "is a local address, which the proxy does not dial") {
			t.Errorf("%s: got %d %q", host, resp.StatusCode, body)
		}
	}
}

// TestCloseEndsTunnels holds a tunnel open with traffic, closes the
// proxy, and checks the tunnel ends at once on the sandbox's side.
func TestCloseEndsTunnels(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() { // an echo server
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	rt := &routes{to: map[string]string{"echo.example:7": l.Addr().String()}}
	p, err := New(Options{Rules: []Rule{{Host: "echo.example", Port: 7}}, Dial: rt.dial})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(pl) }()
	c, resp, _ := rawConnect(t, &url.URL{Host: pl.Addr().String()}, "echo.example:7")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping\n" {
		t.Fatalf("echo: %q %v", buf, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after Close", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // generous: a hang fails, not blocks
	n, err := c.Read(buf)
	if err != io.EOF {
		t.Errorf("tunnel after Close: read %d, %v; want EOF", n, err)
	}
	// Serve after Close serves nothing.
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Serve(l2); err != nil {
		t.Errorf("Serve after Close = %v", err)
	}
	if _, err := net.Dial("tcp", l2.Addr().String()); err == nil {
		t.Error("a listener given after Close still accepts")
	}
}

func TestSecretMissing(t *testing.T) {
	rules := []Rule{{Host: "pkg.example"}, {Host: "api.example", Port: 443, Secret: "TOKEN", Header: "Authorization", Format: "Bearer %s"}}
	_, err := New(Options{Rules: rules, Secret: secrets(nil)})
	want := "egress rule 1 (api.example:443): secret TOKEN is not set"
	if err == nil || err.Error() != want {
		t.Errorf("New = %v, want %s", err, want)
	}
	_, err = New(Options{Rules: rules, Secret: secrets(map[string]string{"TOKEN": "a\r\nX-Evil: 1"})})
	want = "egress rule 1 (api.example:443): secret TOKEN holds a line break or NUL, which no header may"
	if err == nil || err.Error() != want {
		t.Errorf("New = %v, want %s", err, want)
	}
}
