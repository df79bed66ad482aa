package egresstunnel

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/yamux"
)

// Port is where sandboxd listens for its provider's tunnel in a Pod.
const Port = 7426

const (
	// greetingPrefix starts the provider's greeting; its token follows.
	greetingPrefix = "PROMPTKIT-EGRESS/1 "
	// maxLine bounds a greeting or an answer, its newline included.
	maxLine = 256
	// maxToken is the longest token a greeting holds.
	maxToken = maxLine - len(greetingPrefix) - 1

	answerOK      = "ok"
	refusedPrefix = "refused: "

	reasonBadGreeting = "bad greeting"
	reasonBadToken    = "bad token"
	reasonBusy        = "another tunnel is up"
)

// handshakeTimeout bounds the Tunnel's read of a greeting; a Dial's
// handshake, twice it. A variable for the tests.
var handshakeTimeout = 5 * time.Second

// keepAlive is how often each end pings the other.
const keepAlive = 15 * time.Second

// RefusedError is the Tunnel's refusal of a Dial.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "egress tunnel refused: " + e.Reason }

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most maxLine bytes, newline included, and
// returns it without the newline. It reads a byte at a time: what follows
// the line is the yamux session's, and must be left in the connection.
func readLine(r io.Reader) (string, error) {
	buf := make([]byte, 0, maxLine)
	b := make([]byte, 1)
	for len(buf) < maxLine {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(buf), nil
			}
			buf = append(buf, b[0])
			continue
		}
		if err == nil {
			continue
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	return "", errLineTooLong
}

// validToken reports whether token fits in a greeting.
func validToken(token string) error {
	switch {
	case token == "":
		return errors.New("egress tunnel: no token")
	case len(token) > maxToken:
		return fmt.Errorf("egress tunnel: token longer than %d bytes", maxToken)
	}
	for i := 0; i < len(token); i++ {
		if token[i] == '\n' || token[i] == '\r' {
			return errors.New("egress tunnel: token holds a line break")
		}
	}
	return nil
}

// sessionConfig is both ends' yamux configuration: keepalive on, so a
// half-open session dies, and no logging.
func sessionConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.EnableKeepAlive = true
	c.KeepAliveInterval = keepAlive
	c.LogOutput = io.Discard
	return c
}
