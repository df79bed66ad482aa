package host

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestReopenComesOutOfTheTimeout: a call whose plugin process has to be
// started again, and its sandbox reopened there (1.5 s here), has that
// time taken from its timeout, not added to it. The plugin's backend
// kills the hook at the call's one deadline and reports it, with what
// the hook wrote, within the grace the host allows; before the deadline
// was carried across the hop, the backend started a full timeout of its
// own after the reopen, and the host gave up on it first, output lost.
func TestReopenComesOutOfTheTimeout(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	const reopen, timeout = 1500 * time.Millisecond, 2500 * time.Millisecond
	sb := open(t, h, config.Sandbox{Name: "slow", Mode: "test_late", OpenTimeout: time.Minute,
		Config: map[string]any{"open_delay": reopen.String(), "closed_dir": t.TempDir()}})

	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin starts, want 1", len(pids))
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, 10*time.Second, pids[0])
	time.Sleep(200 * time.Millisecond) // for the host to see the process gone

	start := time.Now()
	resp, err := sb.Spawn(context.Background(), sandbox.Request{
		Command: "sh", Args: []string{"-c", "echo started; exec sleep 30"}, Timeout: timeout,
	})
	took := time.Since(start)
	if len(st.pids(t)) != 2 {
		t.Fatalf("%d plugin starts, want 2: the call did not reopen the sandbox", len(st.pids(t)))
	}
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if want := "timed out after " + timeout.String(); !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "did not answer") {
		t.Errorf("err = %q, want the backend's own %q", err, want)
	}
	if got := string(resp.Stdout); got != "started\n" {
		t.Errorf("stdout = %q, want what the hook wrote before the deadline", got)
	}
	if took < timeout || took > timeout+sandbox.Grace/2 {
		t.Errorf("the call took %v, want its timeout %v and no more than %v past it", took, timeout, sandbox.Grace/2)
	}
}
