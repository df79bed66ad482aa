package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

// Defaults for the bounds in Options.
const (
	DefaultMaxConns    = 64
	DefaultIdleTimeout = 2 * time.Minute
	// headerTimeout bounds reading a request's headers, from the
	// sandbox and from an upstream alike.
	headerTimeout = 30 * time.Second
	// maxHeaderBytes bounds a request's headers.
	maxHeaderBytes = 64 << 10
	// dialTimeout bounds one upstream dial, DNS included.
	dialTimeout = 10 * time.Second
)

// Options configure a Proxy.
type Options struct {
	// Name names the sandbox, in the CA's certificate and in logs.
	Name string
	// Rules are what the sandbox may reach; nothing else is allowed.
	Rules []Rule
	// Secret returns a secret's value by its name; every secret a rule
	// names must be set when New is called.
	Secret func(name string) (string, bool)
	// UpstreamRoots verify the upstreams of intercepted hosts; nil means
	// the system roots.
	UpstreamRoots *x509.CertPool
	// Dial opens upstream connections, resolving names itself; nil means
	// a net.Dialer that refuses loopback, link-local and unspecified
	// addresses.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Log receives a line per decision; nil discards them. Secrets are
	// never logged.
	Log hclog.Logger
	// MaxConns caps the sandbox's concurrent connections to the proxy;
	// 0 means DefaultMaxConns. One past the cap waits for a free one.
	MaxConns int
	// IdleTimeout closes a keep-alive connection or a tunnel with no
	// traffic either way for this long; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Proxy is one sandbox's egress proxy. Its methods are safe for
// concurrent use.
type Proxy struct {
	name     string
	rules    []Rule
	secrets  map[string]string // by name
	scrubber *scrub.Scrubber
	ca       *ca
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	upstream *http.Transport // plain HTTP and intercepted HTTPS alike
	log      hclog.Logger
	maxConns int
	idle     time.Duration

	mu      sync.Mutex
	closed  bool
	servers map[*http.Server]bool
	conns   map[net.Conn]bool // hijacked: tunnels' both ends, intercepted connections
	wg      sync.WaitGroup    // hijacked connections' goroutines
}

// New checks that every secret the rules name is set and returns a
// proxy ready to Serve.
func New(opts Options) (*Proxy, error) {
	p := &Proxy{
		name:     opts.Name,
		rules:    append([]Rule(nil), opts.Rules...),
		secrets:  map[string]string{},
		dial:     opts.Dial,
		log:      opts.Log,
		maxConns: opts.MaxConns,
		idle:     opts.IdleTimeout,
		servers:  map[*http.Server]bool{},
		conns:    map[net.Conn]bool{},
	}
	if p.name == "" {
		p.name = "sandbox"
	}
	if p.log == nil {
		p.log = hclog.NewNullLogger()
	}
	if p.maxConns <= 0 {
		p.maxConns = DefaultMaxConns
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.dial == nil {
		p.dial = publicDialer()
	}
	for i, r := range p.rules {
		if r.Secret == "" {
			continue
		}
		v, ok := "", false
		if opts.Secret != nil {
			v, ok = opts.Secret(r.Secret)
		}
		if !ok || v == "" {
			return nil, fmt.Errorf("egress rule %d (%s): secret %s is not set", i, r, r.Secret)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("egress rule %d (%s): secret %s holds a line break or NUL, which no header may", i, r, r.Secret)
		}
		p.secrets[r.Secret] = v
	}
	p.scrubber = scrub.New(p.secrets)
	var err error
	if p.ca, err = newCA(p.name, p.rules, time.Now()); err != nil {
		return nil, err
	}
	p.upstream = &http.Transport{
		Proxy:                  nil, // never the host's proxy variables
		DialContext:            p.dialContext,
		TLSClientConfig:        &tls.Config{RootCAs: opts.UpstreamRoots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    headerTimeout,
		ResponseHeaderTimeout:  5 * time.Minute, // a slow API call, not a stuck one
		IdleConnTimeout:        p.idle,
		MaxIdleConns:           p.maxConns,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableCompression:     true, // the sandbox's Accept-Encoding is its own
		ForceAttemptHTTP2:      false,
	}
	return p, nil
}

// dialContext bounds a dial in time.
func (p *Proxy) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return p.dial(ctx, network, addr)
}

// CACertPEM is the certificate of the proxy's CA, PEM-encoded: the
// sandbox trusts it so that intercepted hosts' certificates verify.
func (p *Proxy) CACertPEM() []byte { return append([]byte(nil), p.ca.certPEM...) }

// Serve answers proxy requests on l until Close or until l fails; it
// returns nil after Close, or the listener's error. Serve may be called
// on several listeners, one after another or at once.
func (p *Proxy) Serve(l net.Listener) error {
	srv := p.newServer(p)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = l.Close()
		return nil
	}
	p.servers[srv] = true
	p.mu.Unlock()
	err := srv.Serve(newLimitListener(l, p.maxConns))
	// A listener that failed on its own (a tunnel's session, which its
	// provider dials again) ends its server's connections with it and
	// leaves nothing behind for Close.
	if !errors.Is(err, http.ErrServerClosed) {
		_ = srv.Close()
	}
	p.mu.Lock()
	delete(p.servers, srv)
	p.mu.Unlock()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// newServer is an HTTP/1.1 server with the proxy's bounds.
func (p *Proxy) newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       p.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          p.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){}, // no HTTP/2
	}
}

// Close stops every Serve, closes their listeners and connections and
// ends live tunnels, and waits for their goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	servers := make([]*http.Server, 0, len(p.servers))
	for s := range p.servers {
		servers = append(servers, s)
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range servers {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.wg.Wait()
	p.upstream.CloseIdleConnections()
	return errors.Join(errs...)
}

// hold registers hijacked connections for Close and counts the
// caller's goroutine, which must call release; it reports false, having
// closed them, when the proxy is closed already.
func (p *Proxy) hold(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	p.wg.Add(1)
	return true
}

// release closes and forgets what hold registered.
func (p *Proxy) release(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
	p.mu.Unlock()
	p.wg.Done()
}

// ServeHTTP answers one request from the sandbox: a CONNECT, or a plain
// HTTP request in absolute form.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" || !r.URL.IsAbs() {
		p.fail(w, http.StatusBadRequest, "this is an HTTP proxy: send requests with an absolute URL (http://host/path), or CONNECT for HTTPS")
		return
	}
	if r.URL.Scheme != "http" {
		p.fail(w, http.StatusBadRequest, fmt.Sprintf("scheme %q is not proxied: use http:// URLs, or CONNECT for HTTPS", r.URL.Scheme))
		return
	}
	// The request's Host header, if it sent one that differs, was
	// dropped by net/http for the URL's host (RFC 9112 3.2.2): what
	// goes upstream is the host the policy judged.
	host, port, err := splitTarget(r.URL.Host, 80)
	if err != nil {
		p.fail(w, http.StatusBadRequest, fmt.Sprintf("bad target: %v", err))
		return
	}
	rule, ok := p.allowed(host, port)
	if !ok {
		p.refuse(w, host, port)
		return
	}
	p.log.Debug("forward", "method", r.Method, "target", joinHostPort(host, port), "credential", rule.Secret != "")
	p.forward(w, r, "http", host, port, rule)
}

// allowed is Allowed for the proxy's rules, refusing a target that is
// neither a DNS name nor an IP address.
func (p *Proxy) allowed(host string, port int) (Rule, bool) {
	if net.ParseIP(host) == nil && !validDNSName(host) {
		return Rule{}, false
	}
	return Allowed(p.rules, host, port)
}

// refuse answers 403 with why, in words an agent reads.
func (p *Proxy) refuse(w http.ResponseWriter, host string, port int) {
	p.log.Info("refused", "target", joinHostPort(host, port))
	p.fail(w, http.StatusForbidden, refusal(host, port, p.rules))
}

// refusal is the message for a target no rule allows.
func refusal(host string, port int, rules []Rule) string {
	return fmt.Sprintf("%s is not allowed by this sandbox's egress policy (allowed: %s)",
		joinHostPort(host, port), describe(rules))
}

// fail answers an error as one line of text/plain.
func (p *Proxy) fail(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	// #nosec G705 -- text/plain with nosniff, read by an agent, not rendered
	_, _ = io.WriteString(w, "promptkit-sandbox egress: "+p.scrubber.String(msg)+"\n")
}
