// Package loopback forwards a port on 127.0.0.1 to a codegen sandbox: a
// provider hands out the loopback address as the sandbox's MCP endpoint
// and joins each connection to wherever sandboxd really listens (a unix
// socket bind-mounted from a container, a Kubernetes Service). The port
// is never bound beyond 127.0.0.1, and it lives and dies with the
// provider's process.
package loopback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	wg     sync.WaitGroup
}

// New listens on Address and forwards each connection to what dial opens.
func New(dial Dial) (*Forwarder, error) {
	ln, err := net.Listen("tcp", Address)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", Address, err)
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
			c.Close()
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
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close, so a request's end reaches sandboxd while the
		// answer still flows back.
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

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
	f.ln.Close()
	for c, up := range f.conns {
		c.Close()
		if up != nil {
			up.Close()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}
