package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestPluginSIGSTOPMidCall freezes the plugin process while it serves a
// call with a 3 s timeout: the call returns a timeout at its deadline
// (plus the hop's grace), the frozen process is killed then and there,
// and the next call, on another sandbox of the plugin, is served by a new
// one. Frozen in turn with no call in flight, the new one is not waited
// on either: closing its sandbox fails at once, saying why, and closing
// the host kills it.
func TestPluginSIGSTOPMidCall(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	hang := open(t, h, config.Sandbox{Name: "hang", Mode: "test_hang"})
	direct := open(t, h, config.Sandbox{Name: "direct", Mode: "test_direct"})
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin processes, want 1", len(pids))
	}
	first := pids[0]
	t.Cleanup(func() {
		// Whatever failed, nothing is left stopped.
		for _, pid := range st.pids(t) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})

	const timeout = 3 * time.Second
	type result struct {
		err  error
		took time.Duration
	}
	res := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := hang.Spawn(context.Background(), sandbox.Request{Command: "x", Timeout: timeout})
		res <- result{err, time.Since(start)}
	}()
	time.Sleep(300 * time.Millisecond) // the call is in the plugin
	stop(t, first)
	var r result
	select {
	case r = <-res:
	case <-time.After(timeout + 10*time.Second):
		t.Fatal("Spawn on a frozen plugin did not return")
	}
	if !errors.Is(r.err, sandbox.ErrTimeout) || !strings.Contains(r.err.Error(), "timed out after 3s") {
		t.Errorf("Spawn: %v, want a timeout after 3s", r.err)
	}
	// The host holds the deadline: 3 s, and a second of grace for the
	// plugin's answer.
	if r.took < timeout || r.took > timeout+3*time.Second {
		t.Errorf("Spawn returned after %v, want about %v", r.took.Round(time.Millisecond), timeout+time.Second)
	}
	waitGone(t, 2*time.Second, first)

	resp, err := direct.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "echo again"}, Timeout: 10 * time.Second})
	if err != nil || string(resp.Stdout) != "again\n" {
		t.Fatalf("the next call: %q, %v", resp.Stdout, err)
	}
	pids = st.pids(t)
	if len(pids) != 2 {
		t.Fatalf("%d plugin starts, want 2: the frozen one and its replacement", len(pids))
	}
	second := pids[0]
	if second == first {
		second = pids[1]
	}
	stop(t, second)
	closed := time.Now()
	err = direct.(sandbox.Closer).Close()
	if !errors.Is(err, sandbox.ErrTransport) || !strings.Contains(err.Error(), "is stopped") {
		t.Errorf("closing the sandbox: %v, want it said the plugin is stopped", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Host.Close: %v", err)
	}
	if took := time.Since(closed); took > 2*time.Second {
		t.Errorf("closing took %v on a frozen plugin", took.Round(time.Millisecond))
	}
	waitGone(t, 5*time.Second, second)
	if proctest.Alive(second) {
		t.Fatalf("plugin %d still alive", second)
	}
}

// TestWedgedPluginKilledOnClose: a plugin that is running but answers
// nothing — spinning on its only thread, not stopped, so the host cannot
// tell it apart from a slow one until it has waited — is SIGKILLed
// killWait after it was asked to exit, and Close returns.
func TestWedgedPluginKilledOnClose(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	t.Setenv("TESTPLUGIN_WEDGE", "1")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Mode: "test_hang"})
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin processes, want 1", len(pids))
	}
	pid := pids[0]
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	_, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x", Timeout: time.Second})
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("Spawn on a wedged plugin: %v, want a timeout", err)
	}
	closed := time.Now()
	done := make(chan error, 1)
	go func() { done <- h.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Host.Close: %v", err)
		}
	case <-time.After(killWait + reapWait + 5*time.Second):
		t.Fatal("Host.Close still waiting on a wedged plugin")
	}
	if took := time.Since(closed); took < killWait || took > killWait+reapWait+time.Second {
		t.Errorf("Host.Close took %v, want about %v", took.Round(time.Millisecond), killWait)
	}
	waitGone(t, 5*time.Second, pid)
}

// TestRuntimeWithFrozenPluginCloses is hook run's path with its plugin
// SIGSTOPped mid-call: the filter hook (timeout_ms 3000) is denied at
// its deadline, and closing the runtime — its sandboxes, then the plugin
// host — returns at once and leaves no plugin process, stopped or not.
func TestRuntimeWithFrozenPluginCloses(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "plugins")
	install(t, testPlugin, pdir, "promptkit-sandbox-test_v1.0.0")
	cfg := filepath.Join(dir, "runtime.yaml")
	doc := "apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n  sandboxes:\n    a: {mode: test_hang}\n    b: {mode: test_hang}\n" +
		"  hooks:\n    h:\n      command: x\n      hook: provider\n      phases: [before_call]\n      sandbox: a\n      timeout_ms: 3000\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	st := trackStarts(t)
	rt, err := hooks.Load(cfg, hooks.Options{Plugins: func(string, []string) (hooks.Plugins, error) {
		return New(Options{Dirs: []string{pdir}, Env: emptyEnv(t), CacheDir: t.TempDir()})
	}})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin processes, want 1", len(pids))
	}
	pid := pids[0]
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGCONT)
	})
	decided := make(chan hooks.Decision, 1)
	go func() {
		d, _ := rt.Call(context.Background(), "h", &wire.Payload{Hook: wire.HookProvider, Phase: "before_call",
			ProviderRequest: &wire.ProviderRequest{ProviderID: "openai", Model: "gpt-4o"}})
		decided <- d
	}()
	time.Sleep(300 * time.Millisecond)
	stop(t, pid)
	select {
	case d := <-decided:
		if d.Allow || !strings.Contains(d.Reason, "timed out after 3s") {
			t.Errorf("decision %+v, want a deny for the timeout", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the filter hook on a frozen plugin did not return")
	}
	closed := time.Now()
	done := make(chan error, 1)
	go func() { done <- rt.Close(context.Background()) }()
	select {
	case <-done:
		// Its error is the lost plugin's, whether it was still stopped
		// or already killed when its sandboxes were closed.
	case <-time.After(20 * time.Second):
		t.Fatal("closing the runtime still waiting on a frozen plugin")
	}
	if took := time.Since(closed); took > 2*time.Second {
		t.Errorf("closing the runtime took %v", took.Round(time.Millisecond))
	}
	waitGone(t, 5*time.Second, pid)
}

// stop SIGSTOPs pid and waits until it is stopped: the signal is
// delivered in its own time.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, state, _, ok := proctest.Stat(pid); ok && state == 'T' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped 5s after SIGSTOP", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
