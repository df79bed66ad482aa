package main

import (
	"bytes"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
)

// splitListener sorts serve's connections by their first bytes: exec's
// relay (execrelay.Magic) to relay, and the rest, gRPC's, to whoever
// Accepts. The first bytes are read on a goroutine of the connection's
// own, so a client that connects and says nothing holds up no other.
type splitListener struct {
	net.Listener
	relay func(net.Conn)
	log   hclog.Logger

	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	err    error // why the listener's Accept failed; set before closed is closed
}

func newSplitListener(lis net.Listener, relay func(net.Conn), log hclog.Logger) *splitListener {
	l := &splitListener{Listener: lis, relay: relay, log: log, conns: make(chan net.Conn), closed: make(chan struct{})}
	go l.accept()
	return l
}

func (l *splitListener) accept() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.once.Do(func() { l.err = err; close(l.closed) })
			return
		}
		go l.route(c)
	}
}

// route reads c's first bytes and hands it on; a connection that sends
// none within execrelay.StallTimeout is closed.
func (l *splitListener) route(c net.Conn) {
	head := make([]byte, len(execrelay.Magic))
	_ = c.SetReadDeadline(time.Now().Add(execrelay.StallTimeout))
	if _, err := io.ReadFull(c, head); err != nil {
		l.log.Trace("closed a connection that sent nothing", "error", err)
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if string(head) == execrelay.Magic {
		l.relay(c)
		return
	}
	select {
	case l.conns <- &prefixedConn{Conn: c, head: bytes.NewReader(head)}:
	case <-l.closed:
		_ = c.Close()
	}
}

// Accept returns the next connection that is not the relay's.
func (l *splitListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections already handed on are their
// holders' to close.
func (l *splitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// prefixedConn is a connection whose first bytes were read already, and
// are read again first.
type prefixedConn struct {
	net.Conn
	head *bytes.Reader
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if c.head.Len() > 0 {
		return c.head.Read(p)
	}
	return c.Conn.Read(p)
}
