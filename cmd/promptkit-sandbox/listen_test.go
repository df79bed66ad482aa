package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestPeerListenerRefusesOtherUsers: a connection from a process of
// another user is closed before anything is read from it. (The test is
// that other user's connection: the listener is told to expect a uid that
// is not ours.)
func TestPeerListenerRefusesOtherUsers(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "s.sock")
	inner, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		uid    int
		accept bool
	}{
		{"same user", os.Getuid(), true},
		{"another user", os.Getuid() + 1, false},
	} {
		lis := &peerListener{Listener: inner, uid: tc.uid, log: hclog.NewNullLogger()}
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := lis.Accept()
			if err == nil {
				accepted <- c
			}
		}()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
			t.Errorf("peerUID: %d, %v; want %d", uid, err, os.Getuid())
		}
		select {
		case ac := <-accepted:
			ac.Close()
			if !tc.accept {
				t.Errorf("%s: accepted", tc.name)
			}
		case <-time.After(500 * time.Millisecond):
			if tc.accept {
				t.Errorf("%s: not accepted", tc.name)
			}
			// Refused: the server closed it.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("%s: the refused connection is still open: %d, %v", tc.name, n, err)
			}
		}
		c.Close()
	}
	inner.Close()
}
