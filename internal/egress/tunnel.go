package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// connectOK is the answer to a CONNECT the proxy carries.
const connectOK = "HTTP/1.1 200 Connection established\r\n\r\n"

// connect answers a CONNECT: refused, tunnelled, or intercepted when the
// rule carries a credential.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitTarget(r.Host, 0)
	if err != nil {
		p.fail(w, http.StatusBadRequest, fmt.Sprintf("bad CONNECT target: %v", err))
		return
	}
	rule, ok := p.allowed(host, port)
	if !ok {
		p.refuse(w, host, port)
		return
	}
	target := joinHostPort(host, port)
	if rule.Secret != "" {
		p.log.Debug("intercept", "target", target)
		p.intercept(w, host, port, rule)
		return
	}
	p.log.Debug("tunnel", "target", target)
	// Dial first, so a host that does not answer gets a 502 the client
	// reads, not a tunnel that closes at once.
	up, err := p.dialContext(r.Context(), "tcp", target)
	if err != nil {
		p.log.Info("upstream failed", "target", target, "error", err)
		p.fail(w, http.StatusBadGateway, fmt.Sprintf("%s did not answer: %v", target, err))
		return
	}
	client, err := hijack(w)
	if err != nil {
		_ = up.Close()
		p.log.Warn("hijack failed", "error", err)
		return
	}
	if !p.hold(client, up) {
		return
	}
	defer p.release(client, up)
	if _, err := io.WriteString(client, connectOK); err != nil {
		return
	}
	p.splice(client, up)
}

// hijack takes the connection over from net/http, with whatever the
// client sent past its request already, and clears its deadlines.
func hijack(w http.ResponseWriter) (net.Conn, error) {
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, fmt.Errorf("hijack: %w", err)
	}
	_ = c.SetDeadline(time.Time{})
	// The reader reads from net/http's side of the connection, which
	// must not be read once hijacked: take only what it holds.
	if n := brw.Reader.Buffered(); n > 0 {
		held, _ := brw.Reader.Peek(n)
		return &prefixConn{Conn: c, prefix: append([]byte(nil), held...)}, nil
	}
	return c, nil
}

// prefixConn reads prefix before its connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

func (c *prefixConn) CloseWrite() error { return closeWrite(c.Conn) }

// splice copies bytes both ways until both sides have ended, passing an
// end of stream on as a half-close. No traffic either way for the idle
// time, or an error on either side, ends both.
func (p *Proxy) splice(a, b net.Conn) {
	extend := func() {
		t := time.Now().Add(p.idle)
		_ = a.SetReadDeadline(t)
		_ = b.SetReadDeadline(t)
	}
	extend()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.pipe(b, a, extend)
	}()
	p.pipe(a, b, extend)
	wg.Wait()
}

// pipe copies src to dst; at src's end it half-closes dst, and on an
// error it closes both, which ends the other direction too.
func (p *Proxy) pipe(dst, src net.Conn, extend func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			extend()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_, _ = src.Close(), dst.Close()
				return
			}
		}
		if errors.Is(err, io.EOF) {
			_ = closeWrite(dst)
			return
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.log.Debug("tunnel idle, closed")
			}
			_, _ = src.Close(), dst.Close()
			return
		}
	}
}
