package resident

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// TestMain lets the test binary run as the resident, as a plugin binary
// does: a child subreaper of its own, which a test's process must not be.
func TestMain(m *testing.M) {
	// As the plugins' mains do: the resident contains calls as they do.
	supervisor.Init()
	if Invoked(os.Args) {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// startProcess starts the test binary as a resident and returns its
// client; the resident ends with the test.
func startProcess(t *testing.T) *Client {
	t.Helper()
	cmd := exec.Command(os.Args[0], Flag)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("resident: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("the resident did not exit after its input ended")
		}
	})
	c := NewClient(out, in)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if pid, err := c.Ready(ctx); err != nil || pid != cmd.Process.Pid {
		t.Fatalf("Ready: pid %d, %v", pid, err)
	}
	return c
}

// daemonCall starts a daemon the classic way (a session of its own, its
// parent gone), records its PID in file, waits for go to exist and exits.
// prefix runs the daemon's command (env -i strips the call's mark).
func daemonCall(file, gate, prefix string) Call {
	script := fmt.Sprintf(`(%s setsid sh -c 'echo $$ >> %s; exec sleep 300' </dev/null >/dev/null 2>&1 &)
while [ ! -e %s ]; do sleep 0.02; done`, prefix, file, gate)
	return Call{Command: "/bin/sh", Args: []string{"-c", script}}
}

// A double-forked daemon is its call's, whatever else runs: it outlives
// neither its own call nor, unmarked, the next call to end.
func TestOrphansSweptWithTheirCall(t *testing.T) {
	c := startProcess(t)
	dir := t.TempDir()
	calls := map[string]chan error{}
	start := func(name, prefix string) []proctest.ID {
		done := make(chan error, 1)
		calls[name] = done
		file := filepath.Join(dir, name+".pid")
		go func() {
			_, err := c.Run(context.Background(), daemonCall(file, filepath.Join(dir, name+".go"), prefix), nil, nil)
			done <- err
		}()
		return proctest.Identify(t, proctest.ReadPIDs(t, file, 1)...)
	}
	finish := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name+".go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-calls[name]:
			if err != nil {
				t.Fatalf("call %s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %s did not end", name)
		}
	}
	running := func(what string, ids []proctest.ID) {
		t.Helper()
		for _, id := range ids {
			if !id.Running() {
				t.Fatalf("%s's daemon (PID %d) was killed while its call ran", what, id.PID)
			}
		}
	}

	a := start("a", "")
	b := start("b", "")
	stripped := start("stripped", "env -i PATH=/usr/bin:/bin")
	finish("stripped") // ends before b's mark could be wrong: it has none
	proctest.AssertGone(t, stripped...)
	running("a", a)
	running("b", b)
	finish("a")
	proctest.AssertGone(t, a...)
	running("b", b)

	// A daemon whose mark is gone is killed by the next call to end.
	late := start("late", "env -i PATH=/usr/bin:/bin")
	running("late", late)
	finish("b")
	proctest.AssertGone(t, b...)
	proctest.AssertGone(t, late...)
	finish("late")
}
