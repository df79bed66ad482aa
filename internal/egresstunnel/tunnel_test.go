package egresstunnel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

const token = "0123456789abcdef0123456789abcdef"

func listen(t *testing.T) *Tunnel {
	t.Helper()
	tun, err := Listen("127.0.0.1:0", token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tun.Close() })
	return tun
}

func dial(t *testing.T, tun *Tunnel) net.Listener {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := Dial(ctx, tun.Addr().String(), token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// echo serves l as the provider's proxy would: each stream it accepts
// gets back what it sends, after a prefix, until it half-closes.
func echo(l net.Listener, prefix string) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.WriteString(c, prefix)
				_, _ = io.Copy(c, c)
			}()
		}
	}()
}

// roundTrip opens a stream on tun and checks what comes back.
func roundTrip(t *testing.T, tun *Tunnel, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := tun.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	payload := bytes.Repeat([]byte("egress "), 100_000) // beyond yamux's window
	go func() {
		_, _ = c.Write(payload)
		_ = c.Close() // yamux's half-close: the reply still comes
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte(prefix), payload...); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes back, want %d", len(got), len(want))
	}
}

func TestRoundTrip(t *testing.T) {
	tun := listen(t)
	echo(dial(t, tun), "proxy: ")
	roundTrip(t, tun, "proxy: ")
	roundTrip(t, tun, "proxy: ") // a stream per connection, on one session
}

func TestBadTokenRefused(t *testing.T) {
	tun := listen(t)
	_, err := Dial(context.Background(), tun.Addr().String(), strings.Repeat("x", len(token)))
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Reason != "bad token" {
		t.Fatalf("err %v, want a refusal for a bad token", err)
	}
	if err.Error() != "egress tunnel refused: bad token" {
		t.Fatalf("err %q", err)
	}
	// A prefix of the token is no better.
	_, err = Dial(context.Background(), tun.Addr().String(), token[:10])
	if !errors.As(err, &refused) || refused.Reason != "bad token" {
		t.Fatalf("a prefix of the token: err %v", err)
	}
}

func TestFirstSessionWins(t *testing.T) {
	tun := listen(t)
	first := dial(t, tun)
	echo(first, "first: ")
	_, err := Dial(context.Background(), tun.Addr().String(), token)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Reason != "another tunnel is up" {
		t.Fatalf("a second session while the first is up: err %v", err)
	}
	roundTrip(t, tun, "first: ")
	_ = first.Close()
	// sandboxd learns of the close as the session's frames arrive.
	var second net.Listener
	for deadline := time.Now().Add(5 * time.Second); ; {
		second, err = Dial(context.Background(), tun.Addr().String(), token)
		if err == nil {
			break
		}
		if !errors.As(err, &refused) || refused.Reason != "another tunnel is up" || time.Now().After(deadline) {
			t.Fatalf("a second session after the first closed: err %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer second.Close()
	echo(second, "second: ")
	roundTrip(t, tun, "second: ")
}

func TestOpenWaitsForASession(t *testing.T) {
	tun := listen(t)
	opened := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := tun.Open(ctx)
		if err == nil {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var b [5]byte
			_, err = io.ReadFull(c, b[:])
			if err == nil && string(b[:]) != "late:" {
				err = errors.New("read " + string(b[:]))
			}
		}
		opened <- err
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-opened:
		t.Fatalf("Open returned before any session: %v", err)
	default:
	}
	echo(dial(t, tun), "late:")
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
}

func TestOpenEndsWithItsContext(t *testing.T) {
	tun := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := tun.Open(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want %v", err, context.DeadlineExceeded)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := tun.Open(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want %v", err, context.Canceled)
	}
}

func TestCloseEndsWaitingOpens(t *testing.T) {
	tun, err := Listen("127.0.0.1:0", token)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := tun.Open(context.Background())
			opened <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := tun.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-opened:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("err %v, want %v", err, net.ErrClosed)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("an Open still waits after Close")
		}
	}
	if _, err := tun.Open(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Open after Close: err %v", err)
	}
}

// TestCloseEndsTheSession: the provider sees sandboxd's end go.
func TestCloseEndsTheSession(t *testing.T) {
	tun := listen(t)
	l := dial(t, tun)
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	_ = tun.Close()
	select {
	case err := <-accepted:
		if err == nil {
			t.Fatal("a stream accepted from a closed tunnel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the provider's Accept still waits after the tunnel closed")
	}
}

// raw sends greeting on a plain connection and returns all the Tunnel
// answers before it closes the connection.
func raw(t *testing.T, tun *Tunnel, greeting []byte) string {
	t.Helper()
	c, err := net.Dial("tcp", tun.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(greeting)
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("%.40q: %v", greeting, err)
	}
	return string(got)
}

func TestGarbageGreetings(t *testing.T) {
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 200 * time.Millisecond
	tun := listen(t)
	for _, c := range []struct {
		greeting, want string
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "refused: bad greeting\n"},
		{"\n", "refused: bad greeting\n"},
		{"PROMPTKIT-EGRESS/2 " + token + "\n", "refused: bad greeting\n"},
		{"PROMPTKIT-EGRESS/1 " + token + "\r\n", "refused: bad token\n"},
		{"PROMPTKIT-EGRESS/1 \n", "refused: bad token\n"},
		{"PROMPTKIT-EGRESS/1 " + strings.Repeat("\x00\xff", 200) + "\n", ""}, // too long: closed unanswered
		{strings.Repeat("A", 100_000), ""},                                   // likewise
		{"PROMPTKIT-EGRESS/1 " + token, ""},                                  // no end of line: closed after the timeout
		{"", ""},                                                             // nothing at all, likewise
	} {
		if got := raw(t, tun, []byte(c.greeting)); got != c.want {
			t.Errorf("%.40q: answer %q, want %q", c.greeting, got, c.want)
		}
	}
	// None of it kept the provider out.
	echo(dial(t, tun), "still: ")
	roundTrip(t, tun, "still: ")
}

func TestListenRefusesABadToken(t *testing.T) {
	for _, tok := range []string{"", "a\nb", strings.Repeat("t", maxToken+1)} {
		if tun, err := Listen("127.0.0.1:0", tok); err == nil {
			_ = tun.Close()
			t.Errorf("Listen with token %.20q: no error", tok)
		}
	}
	tun, err := Listen("127.0.0.1:0", strings.Repeat("t", maxToken))
	if err != nil {
		t.Fatalf("the longest token: %v", err)
	}
	_ = tun.Close()
}

// silent accepts connections and never answers.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return ln.Addr().String()
}

func TestDialHonoursItsContext(t *testing.T) {
	addr := silent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Dial(ctx, addr, token); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want %v", err, context.DeadlineExceeded)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := Dial(ctx, addr, token); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want %v", err, context.Canceled)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestDialWithoutContextDeadlineTimesOut(t *testing.T) {
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 50 * time.Millisecond
	if _, err := Dial(context.Background(), silent(t), token); err == nil || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("err %v, want the handshake to time out", err)
	}
}

func TestDialRejectsAStrangeAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = readLine(c)
		_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
	}()
	if _, err := Dial(context.Background(), ln.Addr().String(), token); err == nil || !strings.Contains(err.Error(), "unexpected answer") {
		t.Fatalf("err %v", err)
	}
}
