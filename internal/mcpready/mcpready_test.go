package mcpready

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

type fakeSandbox struct {
	exited chan struct{}
	output string
}

func (f *fakeSandbox) Exited() <-chan struct{} { return f.exited }
func (f *fakeSandbox) LastOutput() string      { return f.output }

func TestWaitReturnsOnceInitializeIsAnswered(t *testing.T) {
	calls, ended := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") == "s1" {
			ended++
			return
		}
		calls++
		if calls < 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Wait(ctx, "test_mode", srv.URL+Path, "tok", &fakeSandbox{exited: make(chan struct{})}); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || ended != 1 {
		t.Fatalf("%d initializes, %d sessions ended; want 3 and 1", calls, ended)
	}
}

func TestWaitFailsWhenTheSandboxExits(t *testing.T) {
	sb := &fakeSandbox{exited: make(chan struct{}), output: "sandboxd: bad flag"}
	close(sb.exited)
	err := Wait(context.Background(), "test_mode", "http://127.0.0.1:1/mcp", "tok", sb)
	if sandbox.KindOf(err) != sandbox.KindStart || !strings.Contains(err.Error(), "sandboxd: bad flag") {
		t.Fatalf("err %v (kind %s), want KindStart quoting the output", err, sandbox.KindOf(err))
	}
}

func TestWaitTimesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "never ready", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := Wait(ctx, "test_mode", srv.URL+Path, "tok", &fakeSandbox{exited: make(chan struct{})})
	if sandbox.KindOf(err) != sandbox.KindTimeout || !strings.Contains(err.Error(), "never ready") {
		t.Fatalf("err %v (kind %s), want KindTimeout with the last answer", err, sandbox.KindOf(err))
	}
}
