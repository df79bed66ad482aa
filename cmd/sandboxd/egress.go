package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
)

// The egress relay is the sandbox's end of its one way out. A sandbox
// with an egress policy has no network but loopback; its provider's
// proxy, which holds the policy and the credentials, listens on a unix
// socket mounted into the sandbox. Package managers and HTTP clients
// speak to an HTTP proxy over TCP, not to a socket file, so sandboxd
// listens on a loopback port and carries each connection to the socket,
// byte for byte: it decides nothing, the proxy does.

// DefaultEgressListen is where the relay listens by default: the port
// squid made the usual one for a proxy.
const DefaultEgressListen = "127.0.0.1:3128"

// egressDialTimeout bounds reaching the proxy's socket; past it the
// proxy is gone and the client's connection is closed.
const egressDialTimeout = 5 * time.Second

// maxEgressConns bounds the connections carried at once: a shell that
// opens them in a loop gets refused, not sandboxd's file descriptors.
const maxEgressConns = 256

// egressEnv is what the agent's commands get so that their HTTP clients
// use the relay: the usual proxy variables in both cases (curl reads
// only the lower-case http_proxy), loopback left direct, and, when the
// proxy intercepts TLS for hosts whose requests it adds credentials to,
// the bundle that trusts it, under each toolchain's name for it.
func egressEnv(listen, caBundle string) []string {
	url := "http://" + listen
	env := []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
	if caBundle != "" {
		for _, name := range []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "PIP_CERT",
			"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "CARGO_HTTP_CAINFO"} {
			env = append(env, name+"="+caBundle)
		}
	}
	return env
}

// egressRelay carries connections from a loopback listener to the
// proxy's unix socket.
type egressRelay struct {
	ln     net.Listener
	socket string
	log    *slog.Logger
	slots  chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// startEgressRelay listens on listen, which must be loopback: the relay
// is for the sandbox's own processes, never for anyone who can reach the
// sandbox's network.
func startEgressRelay(listen, socket string, log *slog.Logger) (*egressRelay, error) {
	if !server.LoopbackAddr(listen) {
		return nil, fmt.Errorf("--egress-listen %s: want a loopback address such as %s", listen, DefaultEgressListen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("egress relay: listen on %s: %w", listen, err)
	}
	r := &egressRelay{ln: ln, socket: socket, log: log, slots: make(chan struct{}, maxEgressConns), conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// addr is where the relay listens.
func (r *egressRelay) addr() string { return r.ln.Addr().String() }

func (r *egressRelay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				r.log.Warn("egress relay: accept", "err", err)
			}
			return
		}
		select {
		case r.slots <- struct{}{}:
		default:
			r.log.Warn("egress relay: too many connections at once; refused one", "limit", maxEgressConns)
			_ = c.Close()
			continue
		}
		if !r.track(c) {
			<-r.slots
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { <-r.slots }()
			r.carry(c)
		}()
	}
}

// track records a live connection, so that close can end it; false
// when the relay is closing.
func (r *egressRelay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *egressRelay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

// carry copies both ways between c and a new connection to the proxy
// until either side is done with both directions.
func (r *egressRelay) carry(c net.Conn) {
	defer r.untrack(c)
	ctx, cancel := context.WithTimeout(context.Background(), egressDialTimeout)
	up, err := (&net.Dialer{}).DialContext(ctx, "unix", r.socket)
	cancel()
	if err != nil {
		r.log.Warn("egress relay: the proxy does not answer", "socket", r.socket, "err", err)
		return
	}
	if !r.track(up) {
		return
	}
	defer r.untrack(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close, so a client that ends its request still reads the
		// answer.
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

// close stops listening and ends the connections carried.
func (r *egressRelay) close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	_ = r.ln.Close()
	r.wg.Wait()
}
