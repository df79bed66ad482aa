package dockerbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// forwarder listens on a loopback port and joins each connection to
// sandboxd's unix socket: the container has no network, so this port is
// the only way in, and it is never bound beyond 127.0.0.1. It lives in
// the plugin process and dies with it.
type forwarder struct {
	ln   net.Listener
	sock string

	mu     sync.Mutex
	conns  map[net.Conn]net.Conn // client -> its upstream, once dialled
	last   time.Time             // when the last connection closed, or the forwarder started
	closed bool
	wg     sync.WaitGroup
}

// listenLoopback is where forwarders listen: an ephemeral port on IPv4
// loopback only.
const listenLoopback = "127.0.0.1:0"

func newForwarder(sock string) (*forwarder, error) {
	ln, err := net.Listen("tcp", listenLoopback)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listenLoopback, err)
	}
	f := &forwarder{ln: ln, sock: sock, conns: make(map[net.Conn]net.Conn), last: time.Now()}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// addr is the loopback address the forwarder listens on.
func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) accept() {
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

func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = nil
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
	f.last = time.Now()
}

// serve copies both ways until either side ends, then closes both.
func (f *forwarder) serve(c net.Conn) {
	defer f.wg.Done()
	defer f.untrack(c)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	var d net.Dialer
	up, err := d.DialContext(ctx, "unix", f.sock)
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

// idleSince is when the forwarder last had no connection, or the zero
// time while one is open.
func (f *forwarder) idleSince() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.conns) > 0 {
		return time.Time{}
	}
	return f.last
}

// close stops listening, cuts every connection and waits for the copies.
func (f *forwarder) close() {
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
