package loopback

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes each line back on a loopback port until the test
// ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestForwardsOnLoopbackOnly(t *testing.T) {
	f, err := New(TCP(echoServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if host, _, _ := net.SplitHostPort(f.Addr()); host != "127.0.0.1" {
		t.Fatalf("listens on %s, want 127.0.0.1 only", f.Addr())
	}
	if f.IdleSince().IsZero() {
		t.Fatal("idle since zero with no connection")
	}
	c, err := net.Dial("tcp", f.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("echo: %q %v", line, err)
	}
	if !f.IdleSince().IsZero() {
		t.Fatal("idle while a connection is open")
	}
	// Close cuts the open connection.
	f.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection outlived Close")
	}
	if _, err := net.Dial("tcp", f.Addr()); err == nil {
		t.Fatal("still listening after Close")
	}
	f.Close() // again: nothing
}

func TestUnreachableUpstreamClosesTheConnection(t *testing.T) {
	f, err := New(Unix(t.TempDir() + "/no.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := net.Dial("tcp", f.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || len(b) != 0 {
		t.Fatalf("read %q, %v; want a clean close", b, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.IdleSince().IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("the failed connection is still tracked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
