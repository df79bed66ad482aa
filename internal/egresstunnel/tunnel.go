package egresstunnel

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// maxHandshakes bounds the connections greeting the Tunnel at once; one
// more is closed unread. Each lasts at most handshakeTimeout.
const maxHandshakes = 64

// Tunnel is sandboxd's end: it listens for its provider, takes one
// authenticated session at a time, and opens streams on it.
type Tunnel struct {
	ln     net.Listener
	digest [sha256.Size]byte // of the token: compared whatever the greeting's length
	slots  chan struct{}     // one per handshake under way

	mu      sync.Mutex
	sess    *yamux.Session        // the current session, or nil
	busy    bool                  // a session is up or being set up
	changed chan struct{}         // closed when sess changes, or the Tunnel closes
	pending map[net.Conn]struct{} // connections still greeting
	closed  bool
	wg      sync.WaitGroup
}

// Listen listens on addr for the provider's tunnel, which must greet it
// with token; an empty token is refused.
func Listen(addr, token string) (*Tunnel, error) {
	if err := validToken(token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("egress tunnel: %w", err)
	}
	t := &Tunnel{
		ln:      ln,
		digest:  sha256.Sum256([]byte(token)),
		slots:   make(chan struct{}, maxHandshakes),
		changed: make(chan struct{}),
		pending: make(map[net.Conn]struct{}),
	}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// Addr is the address the Tunnel listens on.
func (t *Tunnel) Addr() net.Addr { return t.ln.Addr() }

// Open opens a stream to the provider's proxy on the current session,
// waiting for one (a provider reconnecting after a Pod restart, or not
// connected yet) until ctx ends. It has the signature of a
// loopback.Dial. (Opening a stream on a session does not wait for the
// provider: only when 256 opened streams are still unacknowledged does
// it wait, whatever ctx says, until one is, or until yamux's open
// timeout closes the session.)
func (t *Tunnel) Open(ctx context.Context) (net.Conn, error) {
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, fmt.Errorf("egress tunnel: %w", net.ErrClosed)
		}
		s, changed := t.sess, t.changed
		t.mu.Unlock()
		if s != nil {
			c, err := s.Open()
			if err == nil {
				return c, nil
			}
			// A session ending (or going away) under the call: wait for
			// the next, as for a first.
			if !s.IsClosed() && !errors.Is(err, yamux.ErrRemoteGoAway) {
				return nil, fmt.Errorf("egress tunnel: %w", err)
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("egress tunnel: no session with the provider: %w", context.Cause(ctx))
		}
	}
}

// Close stops listening, closes the session and ends the Opens waiting
// for one.
func (t *Tunnel) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	s := t.sess
	t.setLocked(nil)
	t.closed = true
	pending := make([]net.Conn, 0, len(t.pending))
	for c := range t.pending {
		pending = append(pending, c)
	}
	t.mu.Unlock()
	err := t.ln.Close()
	for _, c := range pending {
		_ = c.Close()
	}
	if s != nil {
		_ = s.Close()
	}
	t.wg.Wait()
	return err
}

// setLocked makes s the current session and wakes the Opens waiting for
// a change.
func (t *Tunnel) setLocked(s *yamux.Session) {
	t.sess = s
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *Tunnel) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept error (out of descriptors): back off.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		select {
		case t.slots <- struct{}{}:
		default:
			_ = c.Close()
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = c.Close()
			return
		}
		t.pending[c] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.handshake(c)
	}
}

// handshake reads c's greeting and answers it; c becomes the session
// when the token is right and no other session is up.
func (t *Tunnel) handshake(c net.Conn) {
	defer t.wg.Done()
	defer func() { <-t.slots }()
	s := t.greet(c)
	t.mu.Lock()
	delete(t.pending, c)
	if s == nil {
		t.mu.Unlock()
		_ = c.Close()
		return
	}
	if t.closed {
		t.busy = false
		t.mu.Unlock()
		_ = s.Close()
		return
	}
	t.setLocked(s)
	t.wg.Add(1)
	t.mu.Unlock()
	go t.watch(s)
}

// greet reads c's greeting and answers it, returning the session it
// starts, or nil when it refused c or c failed. A session it returns
// holds the busy flag.
func (t *Tunnel) greet(c net.Conn) *yamux.Session {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	line, err := readLine(c)
	if err != nil {
		return nil // garbage, too long, too slow or gone: closed unanswered
	}
	token, ok := strings.CutPrefix(line, greetingPrefix)
	if !ok {
		refuse(c, reasonBadGreeting)
		return nil
	}
	got := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(got[:], t.digest[:]) != 1 {
		refuse(c, reasonBadToken)
		return nil
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	if t.busy {
		t.mu.Unlock()
		refuse(c, reasonBusy)
		return nil
	}
	t.busy = true
	t.mu.Unlock()
	s, err := t.start(c)
	if err != nil {
		t.mu.Lock()
		t.busy = false
		t.mu.Unlock()
		return nil
	}
	return s
}

// start answers ok on c and starts sandboxd's end of the session on it.
func (t *Tunnel) start(c net.Conn) (*yamux.Session, error) {
	if _, err := c.Write([]byte(answerOK + "\n")); err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return yamux.Client(c, sessionConfig())
}

// watch waits for s to close, then lets the next session in.
func (t *Tunnel) watch(s *yamux.Session) {
	defer t.wg.Done()
	<-s.CloseChan()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == s {
		t.setLocked(nil)
		t.busy = false
	}
}

// refuse answers c's greeting with reason; the caller closes c.
func refuse(c net.Conn, reason string) {
	_, _ = c.Write([]byte(refusedPrefix + reason + "\n"))
}
