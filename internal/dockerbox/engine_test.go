package dockerbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestEngineUnreachable(t *testing.T) {
	const host = "unix:///nonexistent.sock"
	t.Setenv("DOCKER_HOST", host)
	for _, f := range []struct {
		mode    string
		factory sandbox.Factory
		cfg     map[string]any
	}{
		{RunMode, RunFactory, map[string]any{"image": "busybox"}},
		{ExecMode, ExecFactory, map[string]any{"container": "c"}},
	} {
		start := time.Now()
		_, err := f.factory(context.Background(), "sb", f.cfg)
		if !errors.Is(err, sandbox.ErrTransport) || !strings.Contains(err.Error(), "docker engine at "+host+" is unreachable") {
			t.Errorf("%s: factory err = %v, want ErrTransport naming %s", f.mode, err, host)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s", f.mode, d)
		}
	}

	// The engine goes away after the sandbox opened.
	cli, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	run := &RunSandbox{name: "sb"}
	run.set, _ = parseRunConfig(map[string]any{"image": "busybox"})
	run.run = &apiRunner{name: "sb", set: &run.set, cli: cli}
	ex := &ExecSandbox{name: "sb", cli: cli}
	ex.set, _ = parseExecConfig(map[string]any{"container": "c"})
	ex.eng = remoteproc.New(containerTarget{ex}, remoteproc.Options{Mode: ExecMode})
	for _, sb := range []sandbox.Sandbox{run, ex} {
		start := time.Now()
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "true", Stdin: []byte("x")})
		if !errors.Is(err, sandbox.ErrTransport) || !strings.Contains(err.Error(), host) {
			t.Errorf("%T: err = %v, want ErrTransport naming %s", sb, err, host)
		}
		if resp.Err != err || resp.Stderr != nil || resp.Stdout != nil {
			t.Errorf("%T: resp = %+v", sb, resp)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%T: took %s", sb, d)
		}
	}
	if _, err := RemoveStale(context.Background()); !errors.Is(err, sandbox.ErrTransport) {
		t.Errorf("RemoveStale err = %v", err)
	}
}

func TestRemoveStale(t *testing.T) {
	img := busyboxImage(t)
	// A PID that no longer names a process.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	if processExists(dead) || !processExists(os.Getpid()) {
		t.Fatalf("processExists: %d (gone) %v, %d (this test) %v", dead, processExists(dead), os.Getpid(), processExists(os.Getpid()))
	}
	// The stale containers name this test's own PID, which removeStale is
	// told is dead: every other plugin process on the machine (other
	// tests start some) sees it alive and leaves them alone.
	self := os.Getpid()
	alive := func(pid int) bool { return pid != self && processExists(pid) }
	name := uniqueName(t)
	cleanupNamed(t, name)
	create := func(pid, host string) string {
		return docker(t, "create", "--network", "none",
			"--label", LabelPlugin+"="+PluginName, "--label", LabelName+"="+name,
			"--label", LabelPID+"="+pid, "--label", LabelHost+"="+host, img, "sleep", "60")
	}
	stale := create(itoa(self), hostname())
	docker(t, "start", stale)
	staleStopped := create(itoa(self), hostname())
	live := create(itoa(1), hostname())                // PID 1 always exists
	otherHost := create(itoa(self), "some-other-host") // not ours to judge

	cli, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	removed, err := removeStale(ctxTimeout(t, time.Minute), cli, alive)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(containersNamed(t, name), " ")
	for _, id := range []string{stale, staleStopped} {
		if strings.Contains(got, id[:12]) {
			t.Errorf("stale container %s still there", id[:12])
		}
		found := false
		for _, r := range removed {
			found = found || r == id
		}
		if !found {
			t.Errorf("removed = %v, missing %s", removed, id[:12])
		}
	}
	for _, id := range []string{live, otherHost} {
		if !strings.Contains(got, id[:12]) {
			t.Errorf("container %s was removed but is not stale", id[:12])
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
