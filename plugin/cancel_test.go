package plugin

import (
	"context"
	"errors"
	"testing"
	"time"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A plugin built before Cancel (it answers Unimplemented) still has its
// call ended, at once, when the caller cancels: the stream is cut, as it
// always was.
func TestCancelWithoutCancelRPC(t *testing.T) {
	checkGoroutines(t)
	running := make(chan struct{})
	h := startService(t, &fakeService{open: &sandboxpb.OpenResponse{Handle: "h", OutputLimit: 10}, spawn: func(s sandboxpb.Sandbox_SpawnServer) error {
		for {
			if _, err := s.Recv(); err != nil {
				break
			}
		}
		close(running)
		<-s.Context().Done()
		return s.Context().Err()
	}})
	rs, err := h.client.Open(context.Background(), "s", "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-running; cancel() }()
	start := time.Now()
	_, err = rs.Spawn(ctx, sandbox.Request{Command: "x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > sandbox.Grace/2 {
		t.Errorf("returned %v after the cancel, want at once", took)
	}
}

// The Cancel RPC ends the call it names and no other; a name not in
// flight is no error.
func TestCancelNamesOneCall(t *testing.T) {
	s := &server{calls: map[string]func(){}}
	var a, b int
	doneA := s.inFlight("a", func() { a++ })
	doneB := s.inFlight("b", func() { b++ })
	defer doneB()
	if dup := s.inFlight("a", func() { t.Error("a second call took a name in flight") }); dup == nil {
		t.Fatal("nil unregister")
	}
	resp, err := s.Cancel(context.Background(), &sandboxpb.CancelRequest{Call: "a"})
	if err != nil || !resp.GetFound() || a != 1 || b != 0 {
		t.Fatalf("cancel a: found %v, err %v; a %d b %d", resp.GetFound(), err, a, b)
	}
	doneA()
	resp, err = s.Cancel(context.Background(), &sandboxpb.CancelRequest{Call: "a"})
	if err != nil || resp.GetFound() || a != 1 {
		t.Fatalf("cancel a after its end: found %v, err %v; a %d", resp.GetFound(), err, a)
	}
}
