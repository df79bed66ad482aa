package loopback

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestRefuseAnswersEveryRequest: while refusing, an HTTP request gets
// the answer, whole, on the client's kept-alive connection and on new
// ones, and the upstream is not reached; after Serve it is again.
func TestRefuseAnswersEveryRequest(t *testing.T) {
	var upstream int
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		upstream++
		_, _ = io.WriteString(w, "upstream")
	})}
	ln := listenLoopback(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f, err := New(TCP(ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func() (int, string) {
		t.Helper()
		resp, err := http.Post("http://"+f.Addr()+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || body != "upstream" {
		t.Fatalf("before Refuse: %d %q", code, body)
	}
	f.Refuse(func(req []byte) []byte {
		if !strings.Contains(string(req), `{"jsonrpc":"2.0"}`) {
			t.Errorf("the answer was made from %q, not the whole request", req)
		}
		return []byte("HTTP/1.1 409 Conflict\r\nContent-Length: 23\r\nConnection: close\r\n\r\nsandbox cg-1 is paused\n")
	})
	for range 3 {
		if code, body := get(); code != http.StatusConflict || body != "sandbox cg-1 is paused\n" {
			t.Fatalf("while refusing: %d %q", code, body)
		}
	}
	f.Serve()
	if code, body := get(); code != 200 || body != "upstream" || upstream != 2 {
		t.Fatalf("after Serve: %d %q, upstream reached %d times, want 2", code, body, upstream)
	}
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
