package loopback

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSleepWakesOnTheNextRequest: asleep, the next requests (a kept-alive
// connection's and new ones, at once) wait for one wake and then reach
// the upstream; a wake that fails answers with its failure and the next
// request tries again.
func TestSleepWakesOnTheNextRequest(t *testing.T) {
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "upstream") })}
	ln := listenLoopback(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f, err := New(TCP(ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func() (int, string) {
		resp, err := http.Post("http://"+f.Addr()+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || body != "upstream" {
		t.Fatalf("awake: %d %q", code, body)
	}
	failed := func(err error) Answer {
		return func([]byte) []byte {
			return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + strconv.Itoa(len(err.Error())) + "\r\nConnection: close\r\n\r\n" + err.Error())
		}
	}
	var wakes atomic.Int32
	f.Sleep(func() error { wakes.Add(1); time.Sleep(50 * time.Millisecond); return nil }, failed)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if code, body := get(); code != 200 || body != "upstream" {
				t.Errorf("asleep: %d %q", code, body)
			}
		})
	}
	wg.Wait()
	if wakes.Load() != 1 || f.Asleep() {
		t.Errorf("%d wakes for 4 requests (asleep after: %v), want 1", wakes.Load(), f.Asleep())
	}
	var tries atomic.Int32
	f.Sleep(func() error {
		if tries.Add(1) == 1 {
			return errors.New("cannot resume")
		}
		return nil
	}, failed)
	if code, body := get(); code != 503 || body != "cannot resume" {
		t.Errorf("a failed wake: %d %q", code, body)
	}
	if code, body := get(); code != 200 || body != "upstream" || tries.Load() != 2 {
		t.Errorf("after a failed wake, the next request: %d %q after %d tries, want a second wake", code, body, tries.Load())
	}
}
