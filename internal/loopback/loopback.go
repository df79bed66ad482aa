// Package loopback forwards a port on 127.0.0.1 to a codegen sandbox: a
// provider hands out the loopback address as the sandbox's MCP endpoint
// and joins each connection to wherever sandboxd really listens (a unix
// socket bind-mounted from a container, a Kubernetes Service). The port
// is never bound beyond 127.0.0.1, and it lives and dies with the
// provider's process. Inside a sandbox, sandboxd's egress relay is one
// too: a fixed loopback port joined to its provider's egress proxy.
package loopback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Address is where forwarders listen: an ephemeral port on IPv4 loopback
// only.
const Address = "127.0.0.1:0"

// DialTimeout bounds the dial of one connection's upstream.
const DialTimeout = 5 * time.Second

// Dial opens the upstream of one connection.
type Dial func(ctx context.Context) (net.Conn, error)

// Forwarder listens on a loopback port and joins each connection to an
// upstream of its own.
type Forwarder struct {
	ln   net.Listener
	dial Dial

	mu     sync.Mutex
	conns  map[net.Conn]net.Conn // client -> its upstream, once dialled
	last   time.Time             // when the last connection closed, or the forwarder started
	closed bool
	refuse Answer // while set, what answers every request instead of the upstream
	gate   *gate  // while set, what every request waits for (Sleep)
	wg     sync.WaitGroup
}

// New listens on Address and forwards each connection to what dial opens.
func New(dial Dial) (*Forwarder, error) { return Listen(Address, dial) }

// Listen is New on addr, which the caller has checked is loopback: a
// fixed port that clients inside a sandbox are told of (sandboxd's
// egress relay).
func Listen(addr string, dial Dial) (*Forwarder, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	f := &Forwarder{ln: ln, dial: dial, conns: make(map[net.Conn]net.Conn), last: time.Now()}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// Unix is a Dial of a unix socket.
func Unix(path string) Dial {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
}

// TCP is a Dial of a TCP address.
func TCP(addr string) Dial {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

// Addr is the loopback address the forwarder listens on (host:port).
func (f *Forwarder) Addr() string { return f.ln.Addr().String() }

func (f *Forwarder) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept error (out of descriptors): back off.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if !f.track(c) {
			_ = c.Close()
			return
		}
		f.wg.Add(1)
		go f.serve(c)
	}
}

func (f *Forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = nil
	return true
}

func (f *Forwarder) untrack(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
	f.last = time.Now()
}

// serve copies both ways until either side ends, then closes both.
func (f *Forwarder) serve(c net.Conn) {
	defer f.wg.Done()
	defer f.untrack(c)
	defer c.Close()
	if answer := f.refusing(); answer != nil {
		answerWith(c, nil, answer)
		return
	}
	if answer, ok := f.awaken(); !ok {
		answerWith(c, nil, answer)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), DialTimeout)
	up, err := f.dial(ctx)
	cancel()
	if err != nil {
		return
	}
	defer up.Close()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.conns[c] = up
	f.mu.Unlock()
	done := make(chan struct{}, 2)
	// Half-close, so a request's end reaches sandboxd while the answer
	// still flows back.
	closeWrite := func(dst net.Conn) {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go func() {
		f.requests(up, c)
		closeWrite(up)
	}()
	go func() {
		_, _ = io.Copy(c, up)
		closeWrite(c)
	}()
	<-done
	<-done
}

// requests passes what the client sends on to the upstream until either
// ends, or until the forwarder refuses: then the client's next request
// is answered with the refusal and both ends are closed.
func (f *Forwarder) requests(up, c net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			answer := f.refusing()
			if answer == nil {
				if failed, ok := f.awaken(); !ok {
					answer = failed
				}
			}
			if answer != nil {
				answerWith(c, buf[:n], answer)
				_ = c.Close()
				_ = up.Close()
				return
			}
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Answer makes the whole HTTP response to a refused request (the
// forwarders front sandboxd's HTTP endpoints) from the request's bytes:
// its head and as much of its body as came (up to maxRefused).
type Answer func(request []byte) []byte

// Refuse answers each new connection's request with answer instead of
// dialling the upstream, and each open connection's next request the
// same, closing the connection after it, until Serve: for an upstream
// that would not answer (a paused container), a client is told why at
// once. A request already passed on waits for the upstream, and a stream
// open from it (an SSE stream) stays open: a client's session goes on
// after Serve.
func (f *Forwarder) Refuse(answer Answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = answer
}

// Serve ends a Refuse or a Sleep: requests reach the upstream again.
func (f *Forwarder) Serve() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse, f.gate = nil, nil
}

func (f *Forwarder) refusing() Answer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refuse
}

// answerWith reads the rest of a refused request, first being what came
// of it already, within refuseRead (so that closing does not reset the
// connection under the answer), and writes answer's response.
func answerWith(c net.Conn, first []byte, answer Answer) {
	_ = c.SetDeadline(time.Now().Add(refuseRead))
	req := append(make([]byte, 0, 4096), first...)
	for len(req) < maxRefused && !wholeRequest(req) {
		if len(req) == cap(req) {
			req = append(req, 0)[:len(req)]
		}
		n, err := c.Read(req[len(req):min(cap(req), maxRefused)])
		req = req[:len(req)+n]
		if err != nil {
			break
		}
	}
	_, _ = c.Write(answer(req))
}

// wholeRequest reports whether req holds an HTTP request's head and the
// body its Content-Length announces.
func wholeRequest(req []byte) bool {
	head, body, ok := bytes.Cut(req, []byte("\r\n\r\n"))
	if !ok {
		return false
	}
	for line := range bytes.SplitSeq(head, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(string(value)))
			return err != nil || len(body) >= n
		}
	}
	return true
}

// How much of a refused request is read, and for how long.
const (
	refuseRead = time.Second
	maxRefused = 64 << 10
)

// IdleSince is when the forwarder last had no connection, or the zero
// time while one is open.
func (f *Forwarder) IdleSince() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.conns) > 0 {
		return time.Time{}
	}
	return f.last
}

// Close stops listening, cuts every connection and waits for the copies.
// Calling it again does nothing.
func (f *Forwarder) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	_ = f.ln.Close()
	for c, up := range f.conns {
		_ = c.Close()
		if up != nil {
			_ = up.Close()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}
