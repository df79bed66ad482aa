package egresstunnel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
)

// Dial connects to the tunnel at addr, authenticates with token, and
// returns the session: the caller serves the streams sandboxd opens on
// it (Accept; the session is a net.Listener), until it closes. A refusal
// is a *RefusedError. ctx bounds the connection and the handshake, which
// also ends after twice handshakeTimeout if ctx does not end first.
func Dial(ctx context.Context, addr, token string) (net.Listener, error) {
	if err := validToken(token); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("egress tunnel: %w", err)
	}
	s, err := handshake(ctx, c, token)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return s, nil
}

// handshake greets the tunnel on c and, when it answers ok, starts the
// provider's end of the session on c.
func handshake(ctx context.Context, c net.Conn, token string) (*yamux.Session, error) {
	deadline, ctxDeadline := time.Now().Add(2*handshakeTimeout), false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, ctxDeadline = d, true
	}
	_ = c.SetDeadline(deadline)
	// A ctx cancelled without a deadline ends the handshake too: a
	// deadline in the past fails the read or write under way.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	_, err := c.Write([]byte(greetingPrefix + token + "\n"))
	var line string
	if err == nil {
		line, err = readLine(c)
	}
	if err != nil && ctxDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
		<-ctx.Done() // ctx's deadline passed: it is ending too
	}
	if !stop() || ctx.Err() != nil {
		return nil, fmt.Errorf("egress tunnel: handshake: %w", context.Cause(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("egress tunnel: handshake: %w", err)
	}
	if reason, ok := strings.CutPrefix(line, refusedPrefix); ok {
		return nil, &RefusedError{Reason: reason}
	}
	if line != answerOK {
		if len(line) > 64 {
			line = line[:64] + "..."
		}
		return nil, fmt.Errorf("egress tunnel: handshake: unexpected answer %q", line)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("egress tunnel: %w", err)
	}
	s, err := yamux.Server(c, sessionConfig())
	if err != nil {
		return nil, fmt.Errorf("egress tunnel: session: %w", err)
	}
	return s, nil
}
