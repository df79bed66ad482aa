package rawhop

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	served := make(chan error, 1)
	go func() { served <- Serve(path, direct.New("", shell.Options{})) }()
	var conn net.Conn
	for deadline := time.Now().Add(5 * time.Second); conn == nil; time.Sleep(time.Millisecond) {
		c, err := net.Dial("unix", path)
		if err == nil {
			conn = c
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	c := NewClient(conn)
	resp, err := c.Spawn(context.Background(), sandbox.Request{Command: "cat", Stdin: []byte("hello")})
	if err != nil || string(resp.Stdout) != "hello" {
		t.Fatalf("cat: %q, %v", resp.Stdout, err)
	}
	_, err = c.Spawn(context.Background(), sandbox.Request{Command: "false"})
	if err == nil || !strings.Contains(err.Error(), "exit") {
		t.Fatalf("false: err = %v, want the exit status", err)
	}
	conn.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
