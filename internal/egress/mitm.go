package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// intercept answers a CONNECT to a host whose rule carries a credential:
// it terminates the sandbox's TLS with a leaf of the proxy's CA, reads
// HTTP/1.1 requests off it and forwards each over the proxy's own TLS
// connection to the host, adding the credential.
func (p *Proxy) intercept(w http.ResponseWriter, host string, port int, rule Rule) {
	client, err := hijack(w)
	if err != nil {
		p.log.Warn("hijack failed", "error", err)
		return
	}
	if !p.hold(client) {
		return
	}
	defer p.release(client)
	if _, err := io.WriteString(client, connectOK); err != nil {
		return
	}
	conn := tls.Server(client, &tls.Config{
		// The CONNECT target, whatever name the client's hello gives:
		// a client that expects another name fails to verify.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return p.ca.leaf(host, time.Now())
		},
		NextProtos: []string{"http/1.1"},
		MinVersion: tls.VersionTLS12,
	})
	ctx, cancel := context.WithTimeout(context.Background(), headerTimeout)
	err = conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		p.log.Info("TLS handshake with the sandbox failed", "target", joinHostPort(host, port), "error", err)
		return
	}
	l := newOneConnListener(conn)
	srv := p.newServer(&interceptHandler{p: p, host: host, port: port, rule: rule})
	srv.ConnState = l.connState
	_ = srv.Serve(l) // returns once the connection's requests are done
}

// interceptHandler forwards the requests of one intercepted connection
// to the host it was opened to.
type interceptHandler struct {
	p    *Proxy
	host string
	port int
	rule Rule
}

func (h *interceptHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := joinHostPort(h.host, h.port)
	// r.Host is the Host header, or the URL's host for an absolute URL:
	// either must name the host the tunnel was opened to, or the policy
	// would be judged on one host and the credential sent to another.
	host, port, err := splitTarget(r.Host, h.port)
	if err != nil || host != h.host || port != h.port || r.URL.Scheme != "" && r.URL.Scheme != "https" {
		h.p.log.Info("refused: Host disagrees with CONNECT", "target", target, "host", r.Host)
		h.p.fail(w, http.StatusForbidden, fmt.Sprintf("a request for Host %q inside a tunnel to %s is refused: the Host must be the CONNECT target", r.Host, target))
		return
	}
	if r.Method == http.MethodConnect {
		h.p.fail(w, http.StatusMethodNotAllowed, "CONNECT inside a tunnel is not proxied")
		return
	}
	h.p.forward(w, r, "https", h.host, h.port, h.rule)
}

// oneConnListener hands one connection to an http.Server, then makes it
// wait until that connection is done with (its handler returned), so
// that Serve returning means nothing of it runs any more.
type oneConnListener struct {
	conn net.Conn
	mu   sync.Mutex
	used bool
	done chan struct{}
	once sync.Once
}

func newOneConnListener(c net.Conn) *oneConnListener {
	return &oneConnListener{conn: c, done: make(chan struct{})}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	used := l.used
	l.used = true
	l.mu.Unlock()
	if !used {
		return l.conn, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

// Close does not end Accept's wait: only the connection's end does.
func (l *oneConnListener) Close() error { return nil }

func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// connState is the server's ConnState hook: a connection closed or
// hijacked is done with.
func (l *oneConnListener) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		l.once.Do(func() { close(l.done) })
	}
}
