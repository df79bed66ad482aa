package main

import (
	"net"
	"testing"
)

// freeLoopbackAddr is a loopback address with a port free a moment ago,
// for a listener the test's child opens.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
