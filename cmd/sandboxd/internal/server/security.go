package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Gate is what every HTTP request passes before the MCP handlers see it:
// the bearer token, the Origin allow-list, the Host check against DNS
// rebinding and the body cap. A request that fails any of them gets its
// status here and never reaches a tool.
type Gate struct {
	// Token is the bearer token every request must carry.
	Token string
	// AllowedOrigins are the Origin values browsers may send, exactly as
	// they send them ("http://localhost:3000"); matching ignores case.
	AllowedOrigins []string
	// MaxBody caps a request body in bytes.
	MaxBody int64
	// Loopback says the listener is bound to a loopback address: then the
	// Host header must name a loopback host too, which is what defeats a
	// web page that rebinds its own domain to 127.0.0.1.
	Loopback bool
}

// What a CORS preflight from an allowed origin is told: the methods and
// request headers the MCP transports use, and for how long (seconds) the
// browser may remember the answer. Mcp-Session-Id is exposed so a page
// can carry its Streamable HTTP session on.
const (
	corsAllowMethods  = "GET, POST, DELETE, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
	corsMaxAge        = "600"
)

// Wrap returns next behind the gate. A request from an allowed Origin
// gets the CORS headers a browser needs to let its page read the answer,
// and a CORS preflight from one (OPTIONS with
// Access-Control-Request-Method) is answered 204 without a token.
func (g Gate) Wrap(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(g.Token))
	origins := make(map[string]bool, len(g.AllowedOrigins))
	for _, o := range g.AllowedOrigins {
		origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !origins[strings.ToLower(origin)] {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed (sandboxd --allowed-origin)", origin), http.StatusForbidden)
			return
		}
		if origin != "" {
			// An allowed origin: the browser lets its page read every
			// answer, the gate's refusals included, so it can say why.
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		if g.Loopback && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback name on a loopback listener", r.Host), http.StatusForbidden)
			return
		}
		if origin != "" && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			// A CORS preflight carries no credentials by design: it asks
			// whether the real request may be sent, and that request
			// must still bring the token.
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// Hashing both sides makes the comparison constant-time whatever
		// the lengths, so a timing probe learns nothing of the token.
		got := sha256.Sum256([]byte(bearer(r)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sandboxd"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > g.MaxBody {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body limit is %d bytes", g.MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// A chunked body has no length to check up front; JSON-RPC
			// messages are decoded whole anyway, so read it here, capped.
			body, err := io.ReadAll(io.LimitReader(r.Body, g.MaxBody+1))
			_ = r.Body.Close()
			if err != nil {
				http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if int64(len(body)) > g.MaxBody {
				http.Error(w, fmt.Sprintf("Request Entity Too Large: the body limit is %d bytes", g.MaxBody), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// bearer is the token of an "Authorization: Bearer X" header, or "".
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// loopbackHost reports whether a Host header (host or host:port) names
// the loopback interface. Browsers resolve *.localhost to loopback
// themselves, so those count too.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return loopbackName(host) || strings.HasSuffix(strings.ToLower(host), ".localhost")
}

// LoopbackAddr reports whether a listen address (host:port) binds only
// loopback.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackName(host)
}

// loopbackName reports whether host is "localhost" or a loopback IP.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// OriginOf is the Origin a browser sends for a page at rawURL, for
// building an allow-list from URLs.
func OriginOf(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("origin %q: want scheme://host[:port]", rawURL)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}
