package host

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestPluginSIGKILLDuringConcurrentCalls SIGKILLs the plugin process in
// the middle of 20 calls on two sandboxes it serves: each call returns a
// transport error at once, nothing the calls started is left, and both
// sandboxes serve the next call through a new plugin process.
func TestPluginSIGKILLDuringConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	boxes := []sandbox.Sandbox{
		open(t, h, config.Sandbox{Name: "a", Mode: "test_direct"}),
		open(t, h, config.Sandbox{Name: "b", Mode: "test_direct"}),
	}
	marker := sandboxtest.NewMarker()
	const n = 20
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := boxes[i%2].Spawn(context.Background(), sandbox.Request{
				Command: "sh", Args: []string{"-c", `sleep "$0"`, marker}, Timeout: time.Minute,
			})
			errs <- err
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		procs, err := sandboxtest.HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		// Each call's sh, and its sleep.
		if len(procs) >= 2*n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the calls' %d processes ran after a minute", len(procs), 2*n)
		}
		time.Sleep(25 * time.Millisecond)
	}
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin processes, want 1", len(pids))
	}
	killed := time.Now()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	took := time.Since(killed)
	close(errs)
	for err := range errs {
		if !errors.Is(err, sandbox.ErrTransport) {
			t.Errorf("a call got %v, want a transport error", err)
		}
	}
	if took > 2*time.Second {
		t.Errorf("the calls returned %v after the plugin's SIGKILL", took.Round(time.Millisecond))
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)

	for _, sb := range boxes {
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "echo again"}})
		if err != nil || string(resp.Stdout) != "again\n" {
			t.Errorf("%s after the plugin's SIGKILL: %q, %v", sb.Name(), resp.Stdout, err)
		}
	}
	if pids := st.pids(t); len(pids) != 2 {
		t.Errorf("%d plugin starts, want 2: the first and one after the kill", len(pids))
	}
}
