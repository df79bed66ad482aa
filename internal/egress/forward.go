package egress

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// hopByHop are the headers that concern one connection, not the request:
// a proxy drops them both ways (RFC 9110 7.6.1), and Proxy-Authorization
// besides, which is for this proxy alone.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// forward sends r to scheme://host:port, which rule allows, and copies
// the answer back; with a credential it adds the header on the way out
// and scrubs the answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, scheme, host string, port int, rule Rule) {
	target := fmt.Sprintf("%s:%d", host, port)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// No traffic either way for the idle time ends the exchange: the
	// transport bounds the wait for headers, not a stalled body.
	idle := time.AfterFunc(p.idle, cancel)
	defer idle.Stop()
	touch := func() { idle.Reset(p.idle) }

	u := &url.URL{Scheme: scheme, Host: joinHostPort(host, port), Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	var body io.Reader = http.NoBody
	if r.ContentLength != 0 {
		body = &touchReader{r: r.Body, touch: touch}
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		p.fail(w, http.StatusBadRequest, fmt.Sprintf("bad request for %s: %v", target, err))
		return
	}
	out.ContentLength = r.ContentLength
	out.Host = hostHeader(host, port, scheme)
	out.Header = outboundHeader(r.Header)
	if rule.Secret != "" {
		// Uncompressed, so the scrubbing below sees the bytes.
		out.Header.Set("Accept-Encoding", "identity")
		out.Header.Set(rule.Header, rule.Value(p.secrets[rule.Secret]))
	}

	resp, err := p.upstream.RoundTrip(out)
	if err != nil {
		p.log.Info("upstream failed", "target", target, "error", p.scrubber.String(err.Error()))
		p.fail(w, http.StatusBadGateway, fmt.Sprintf("%s did not answer: %v", target, err))
		return
	}
	defer func() { _ = resp.Body.Close() }()
	scrubbed := rule.Secret != ""
	if enc := resp.Header.Get("Content-Encoding"); scrubbed && enc != "" && !strings.EqualFold(enc, "identity") {
		p.fail(w, http.StatusBadGateway, fmt.Sprintf("%s answered with Content-Encoding %s although asked for none: the proxy cannot scrub it, so does not pass it on", target, enc))
		return
	}
	h := w.Header()
	for k, vv := range resp.Header {
		if hopByHop[k] || connectionListed(resp.Header, k) {
			continue
		}
		for _, v := range vv {
			if scrubbed {
				v = p.scrubber.String(v)
			}
			h.Add(k, v)
		}
	}
	if scrubbed {
		h.Del("Content-Length") // scrubbing may change it
	}
	w.WriteHeader(resp.StatusCode)
	if err := p.copyBody(w, resp.Body, scrubbed, touch); err != nil {
		p.log.Debug("response body cut short", "target", target, "error", p.scrubber.String(err.Error()))
	}
}

// copyBody copies an upstream's body to the sandbox, flushing each piece
// (an event stream must not wait for a full buffer), scrubbed when asked.
func (p *Proxy) copyBody(w http.ResponseWriter, body io.Reader, scrubbed bool, touch func()) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	var st interface {
		Write(string) string
		Flush() string
	}
	if scrubbed {
		st = p.scrubber.NewStream()
	}
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			touch()
			chunk := buf[:n]
			if st != nil {
				chunk = []byte(st.Write(string(chunk)))
			}
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			_ = rc.Flush()
		}
		if rerr == io.EOF {
			if st != nil {
				if _, err := io.WriteString(w, st.Flush()); err != nil {
					return err
				}
			}
			return nil
		}
		if rerr != nil {
			// What is held back may end mid-secret: drop it.
			return rerr
		}
	}
}

// outboundHeader is h without hop-by-hop headers, those its Connection
// header names, and Host.
func outboundHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vv := range h {
		if hopByHop[k] || k == "Host" || connectionListed(h, k) {
			continue
		}
		out[k] = append([]string(nil), vv...)
	}
	return out
}

// connectionListed reports whether h's Connection header names header k
// as one for this connection only.
func connectionListed(h http.Header, k string) bool {
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			if http.CanonicalHeaderKey(strings.TrimSpace(name)) == k {
				return true
			}
		}
	}
	return false
}

// hostHeader is the Host header for host:port: the port only when it is
// not the scheme's own.
func hostHeader(host string, port int, scheme string) string {
	if scheme == "http" && port == 80 || scheme == "https" && port == 443 {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return joinHostPort(host, port)
}

// touchReader calls touch on every read that moves data.
type touchReader struct {
	r     io.Reader
	touch func()
}

func (t *touchReader) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if n > 0 {
		t.touch()
	}
	return n, err
}
