package egress

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const secretValue = "s3cret-7f3a9c"

var tokenRule = Rule{Host: "api.example.com", Secret: "TOKEN", Header: "Authorization", Format: "Bearer %s"}

// checkInjected checks that the upstream saw exactly the injected
// credential, uncompressed, and the sandbox's own value never.
func checkInjected(t *testing.T, up *seen, n int) {
	t.Helper()
	reqs := up.all()
	if len(reqs) != n {
		t.Fatalf("upstream saw %d requests, want %d", len(reqs), n)
	}
	for _, r := range reqs {
		if got := r.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+secretValue {
			t.Errorf("upstream saw Authorization %q, want [Bearer %s]", got, secretValue)
		}
		if got := r.Header.Get("Accept-Encoding"); got != "identity" {
			t.Errorf("upstream saw Accept-Encoding %q, want identity", got)
		}
	}
}

// checkScrubbed checks that a response the upstream filled with the
// secret reaches the sandbox without it.
func checkScrubbed(t *testing.T, resp *http.Response, body, wantBody string) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || body != wantBody {
		t.Errorf("got %d %q\nwant 200 %q", resp.StatusCode, body, wantBody)
	}
	for k, vv := range resp.Header {
		for _, v := range vv {
			if strings.Contains(v, secretValue) {
				t.Errorf("header %s holds the secret: %q", k, v)
			}
		}
	}
	if got := resp.Header.Get("X-Echo-Auth"); got != "Bearer [REDACTED:secret:TOKEN]" {
		t.Errorf("X-Echo-Auth = %q", got)
	}
}

func TestCredentialOverHTTP(t *testing.T) {
	var up seen
	srv := httptest.NewServer(echo(&up))
	defer srv.Close()
	rt := &routes{to: map[string]string{"api.example.com:80": hostOf(t, srv)}}
	_, proxy := startProxy(t, Options{
		Rules:  []Rule{tokenRule},
		Secret: secrets(map[string]string{"TOKEN": secretValue}),
		Dial:   rt.dial,
	})
	c := client(t, proxy, nil)
	// The sandbox's own Authorization is overwritten, not added to.
	resp, body := get(t, c, "http://api.example.com/user", http.Header{"Authorization": {"Bearer from-the-sandbox"}})
	checkScrubbed(t, resp, body, "host=api.example.com path=/user auth=Bearer [REDACTED:secret:TOKEN]\n")
	resp, body = get(t, c, "http://api.example.com/again", nil)
	checkScrubbed(t, resp, body, "host=api.example.com path=/again auth=Bearer [REDACTED:secret:TOKEN]\n")
	checkInjected(t, &up, 2)
}

// mitmSetup serves tokenRule's host over TLS on loopback and returns a
// client that trusts only the proxy's CA.
func mitmSetup(t *testing.T, h http.Handler) (*Proxy, *http.Client, *httptest.Server) {
	t.Helper()
	srv := quietTLSServer(h)
	t.Cleanup(srv.Close)
	upRoots := x509.NewCertPool()
	upRoots.AddCert(srv.Certificate())
	rt := &routes{to: map[string]string{"api.example.com:443": hostOf(t, srv)}}
	p, proxy := startProxy(t, Options{
		Name:          "sbx-1",
		Rules:         []Rule{{Host: "proxy.golang.org"}, tokenRule},
		Secret:        secrets(map[string]string{"TOKEN": secretValue}),
		Dial:          rt.dial,
		UpstreamRoots: upRoots,
	})
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACertPEM()) {
		t.Fatal("CACertPEM holds no certificate")
	}
	return p, client(t, proxy, roots), srv
}

func TestCredentialOverHTTPS(t *testing.T) {
	var up seen
	_, c, _ := mitmSetup(t, echo(&up))
	resp, body := get(t, c, "https://api.example.com/user?x=1", http.Header{"Authorization": {"Bearer from-the-sandbox"}})
	checkScrubbed(t, resp, body, "host=api.example.com path=/user?x=1 auth=Bearer [REDACTED:secret:TOKEN]\n")
	// The sandbox talked TLS to the proxy's leaf for the host.
	leaf := resp.TLS.PeerCertificates[0]
	if leaf.Issuer.CommonName != "promptkit-sandbox egress CA for sbx-1" || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "api.example.com" {
		t.Errorf("leaf %v for %v issued by %q", leaf.Subject, leaf.DNSNames, leaf.Issuer.CommonName)
	}
	// A second request reuses the intercepted connection.
	resp, body = get(t, c, "https://api.example.com/again", nil)
	checkScrubbed(t, resp, body, "host=api.example.com path=/again auth=Bearer [REDACTED:secret:TOKEN]\n")
	checkInjected(t, &up, 2)
}

func TestCredentialStreamScrubbed(t *testing.T) {
	// A body longer than one read, the secret spread through it and
	// split across writes, comes back whole and scrubbed.
	var up seen
	_, c, _ := mitmSetup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up.add(r)
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		fl := http.NewResponseController(w)
		for i := range 500 {
			half := len(secretValue) / 2
			_, _ = fmt.Fprintf(w, "line %d token=%s", i, secretValue[:half])
			_ = fl.Flush()
			_, _ = fmt.Fprintf(w, "%s end\n", secretValue[half:])
		}
	}))
	resp, body := get(t, c, "https://api.example.com/stream", nil)
	var want strings.Builder
	for i := range 500 {
		fmt.Fprintf(&want, "line %d token=[REDACTED:secret:TOKEN] end\n", i)
	}
	if body != want.String() {
		t.Errorf("body differs from the scrubbed stream (%d bytes, want %d); secret present: %v",
			len(body), want.Len(), strings.Contains(body, secretValue))
	}
	checkScrubbed(t, resp, want.String(), want.String())
}

func TestCredentialCompressedRefused(t *testing.T) {
	_, c, _ := mitmSetup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = io.WriteString(w, "\x1f\x8b not really")
	}))
	resp, body := get(t, c, "https://api.example.com/z", nil)
	want := "promptkit-sandbox egress: api.example.com:443 answered with Content-Encoding gzip although asked for none: the proxy cannot scrub it, so does not pass it on\n"
	if resp.StatusCode != http.StatusBadGateway || body != want {
		t.Errorf("got %d %q, want 502 %q", resp.StatusCode, body, want)
	}
}

func TestInterceptHostMismatch(t *testing.T) {
	var up seen
	_, c, _ := mitmSetup(t, echo(&up))
	for _, host := range []string{"proxy.golang.org", "api.example.com:8443", "evil.example"} {
		req, err := http.NewRequest(http.MethodGet, "https://api.example.com/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host // the Host header, inside the tunnel to api.example.com:443
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want := fmt.Sprintf("promptkit-sandbox egress: a request for Host %q inside a tunnel to api.example.com:443 is refused: the Host must be the CONNECT target\n", host)
		if resp.StatusCode != http.StatusForbidden || string(body) != want {
			t.Errorf("Host %s: got %d %q\nwant 403 %q", host, resp.StatusCode, body, want)
		}
	}
	if n := len(up.all()); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
}

func TestInterceptUpstreamVerified(t *testing.T) {
	// The proxy's own TLS to the host is verified: an upstream whose
	// certificate UpstreamRoots does not hold is a 502, not a request.
	var up seen
	srv := quietTLSServer(echo(&up))
	defer srv.Close()
	rt := &routes{to: map[string]string{"api.example.com:443": hostOf(t, srv)}}
	p, proxy := startProxy(t, Options{
		Rules:         []Rule{tokenRule},
		Secret:        secrets(map[string]string{"TOKEN": secretValue}),
		Dial:          rt.dial,
		UpstreamRoots: x509.NewCertPool(), // trusts nothing
	})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.CACertPEM())
	resp, body := get(t, client(t, proxy, roots), "https://api.example.com/", nil)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "certificate signed by unknown authority") {
		t.Errorf("got %d %q, want 502 naming the unknown authority", resp.StatusCode, body)
	}
	if n := len(up.all()); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
}

func TestCloseEndsInterceptedConnections(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	p, c, _ := mitmSetup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		http.NewResponseController(w).Flush()
		select { // a long response, held open
		case <-release:
		case <-r.Context().Done():
		}
	}))
	resp, err := c.Get("https://api.example.com/slow")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // generous: a hang fails, not blocks
		t.Fatal("Close did not return with an intercepted connection open")
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the response went on after Close")
	}
}

func TestCAConstrainedToCredentialHosts(t *testing.T) {
	now := time.Now()
	a, err := newCA("sbx", []Rule{{Host: "proxy.golang.org"}, tokenRule, {Host: "*.corp.example", Secret: "T", Header: "X-Key", Format: "%s"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(a.certPEM)
	caCert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if caCert.PublicKeyAlgorithm != x509.ECDSA || !caCert.IsCA || caCert.NotAfter.Sub(now) > caValidity {
		t.Errorf("CA: %v, CA %v, until %v", caCert.PublicKeyAlgorithm, caCert.IsCA, caCert.NotAfter)
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	for host, ok := range map[string]bool{"api.example.com": true, "x.corp.example": true, "proxy.golang.org": false, "evil.example": false, "10.0.0.1": false} {
		l, err := a.leaf(host, now)
		if err != nil {
			t.Fatal(err)
		}
		_, verr := l.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: now})
		if (verr == nil) != ok {
			t.Errorf("leaf for %s: verify error %v, want ok=%v", host, verr, ok)
		}
	}
	// Leaves are cached, and the cache is bounded.
	l1, _ := a.leaf("api.example.com", now)
	l2, _ := a.leaf("api.example.com", now)
	if l1 != l2 {
		t.Error("a second leaf for the same host was minted")
	}
	for i := range maxLeaves + 10 {
		if _, err := a.leaf(fmt.Sprintf("h%d.corp.example", i), now); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.leaves) != maxLeaves || len(a.order) != maxLeaves {
		t.Errorf("cache holds %d leaves (%d in order), want %d", len(a.leaves), len(a.order), maxLeaves)
	}
}
