package promptkit_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestCloseCancelsCallsInFlight: Close does not return with calls still
// running to their timeout. A hook that (with its child) would sleep 60 s
// is cancelled: the call returns at once with an error that says so, and
// nothing of it is left.
func TestCloseCancelsCallsInFlight(t *testing.T) {
	a := directAdapter(t, promptkit.Options{})
	r := pksandbox.NewRegistry()
	if err := a.Register(r); err != nil {
		t.Fatal(err)
	}
	sb := mustOpen(t, r, "direct", "hooks", nil)
	pids := filepath.Join(t.TempDir(), "pids")

	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		_, err := sb.Spawn(context.Background(), pksandbox.Request{
			Command: "/bin/sh",
			Args:    []string{"-c", `echo $$ >> "$0"; sleep 60 & echo $! >> "$0"; wait`, pids},
			Timeout: 60 * time.Second,
		})
		done <- result{err, time.Since(start)}
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, pids, 2)...)

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- a.Close() }()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight was still running 10s after Close")
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close and the call took %s", took)
	}
	if !errors.Is(res.err, context.Canceled) || !errors.Is(res.err, sandbox.ErrCanceled) || !errors.Is(res.err, promptkit.ErrClosed) {
		t.Errorf("the call cancelled by Close returned %v; want a cancellation caused by ErrClosed", res.err)
	}
	proctest.AssertGone(t, ids...)

	// After Close, a call fails at once.
	if _, err := sb.Spawn(context.Background(), pksandbox.Request{Command: "/bin/true"}); !errors.Is(err, promptkit.ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}
