package egress

import (
	"net"
	"testing"
	"time"
)

func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, 1)
	defer func() { _ = l.Close() }()
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted past the cap of 1")
	case <-time.After(50 * time.Millisecond):
	}
	_ = first.Close()
	_ = first.Close() // a second Close gives back nothing more
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatal("Accept failed after a slot was freed")
		}
		_ = c.Close()
	case <-time.After(10 * time.Second): // generous
		t.Fatal("the second connection was not accepted once the first closed")
	}
	if len(l.sem) != 0 {
		t.Errorf("%d slots still held after both connections closed", len(l.sem))
	}
}
