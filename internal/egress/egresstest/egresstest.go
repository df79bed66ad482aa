// Package egresstest routes an egress proxy's upstreams to servers a
// test runs on loopback, as providers' tests of egress rules need:
// never the internet.
package egresstest

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// Dial is how a proxy opens its upstreams (egress.Options.Dial).
type Dial = func(ctx context.Context, network, addr string) (net.Conn, error)

// Upstreams returns a Dial that takes each "host:port" of routes to its
// server, and refuses every other address, and the roots that trust the
// servers' certificates (httptest's are for example.com).
func Upstreams(routes map[string]*httptest.Server) (Dial, *x509.CertPool) {
	roots := x509.NewCertPool()
	for _, s := range routes {
		if s.Certificate() != nil {
			roots.AddCert(s.Certificate())
		}
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		s, ok := routes[addr]
		if !ok {
			return nil, fmt.Errorf("no route to %s in this test", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
	}
	return dial, roots
}

// Get has a sandbox's Bash ask the proxy its environment names
// ($HTTP_PROXY) for url, as an HTTP client would, through bash's own
// /dev/tcp (no client of the image's), and returns the whole answer,
// status line and headers included.
func Get(t testing.TB, cs *mcp.ClientSession, url, host string) string {
	t.Helper()
	return mcptest.CallText(t, cs, "Bash", map[string]any{"command": fmt.Sprintf(`p=${HTTP_PROXY#http://}; exec 3<>/dev/tcp/${p%%:*}/${p##*:} &&
printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' >&3 && cat <&3`, url, host)})
}
