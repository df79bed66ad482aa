package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
)

// Bounds, from the kill, on the end of a docker_run call's container
// whose plugin ended, on a loaded machine (busyLoops): its processes
// gone, and the container itself removed. Measured on two loaded cores:
// the processes within a second, the container within two (see
// docs/docker.md, "When the plugin dies").
const (
	runProcsGoneWithin     = 5 * time.Second
	runContainerGoneWithin = 10 * time.Second
	busyLoops              = 16
)

// TestRunContainerEndsWithItsPlugin ends the plugin serving a docker_run
// call in flight, under CPU load, in each way a plugin ends: its host
// SIGKILLed (the plugin gets SIGTERM and kills the container itself),
// the plugin SIGKILLed alone, and the host's process group SIGKILLed,
// plugin included, so that nothing of ours is left to clean up. Each
// time the call's processes and its container are gone within the
// bounds above: the container's command runs under the tether, which
// ends it once the plugin's connection goes, however the plugin went.
func TestRunContainerEndsWithItsPlugin(t *testing.T) {
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Busybox)
	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.9.0")
	cfg := filepath.Join(dir, "runtime.yaml")
	body := "spec:\n  sandboxes:\n    fresh:\n      mode: docker_run\n      image: " + image + "\n      network: none\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	load := sandboxtest.CPULoad(t, busyLoops)
	t.Logf("%d busy loops on %d CPUs; load average %s", busyLoops, runtime.NumCPU(), load)
	for _, kill := range []string{"host", "plugin", "host and plugin"} {
		t.Run(kill, func(t *testing.T) {
			marker := sandboxtest.NewMarker()
			host := exec.Command(cli, "spawn", "--plugin-dir", pluginDir, "--config", cfg, "--sandbox", "fresh",
				"--timeout", "5m", "--", "sh", "-c", `sleep "$0"`, marker)
			// The plugin's socket goes in TMPDIR: short, for a socket
			// path has 108 bytes.
			tmp, err := os.MkdirTemp("", "pkrk-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(tmp) })
			host.Env = append(os.Environ(), "TMPDIR="+tmp)
			// A group of its own, which its plugin joins, to be killed
			// together.
			host.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr syncBuffer
			host.Stderr = &stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = host.Wait(); close(exited) }()
			t.Cleanup(func() {
				_ = syscall.Kill(-host.Process.Pid, syscall.SIGKILL)
				<-exited
			})

			seen := waitCallSleep(t, marker, exited, &stderr)
			plugin := pluginPID(t, seen[0].Container)
			if pgid, err := syscall.Getpgid(plugin); err != nil || pgid != host.Process.Pid {
				t.Fatalf("the plugin (%d) is in process group %d (%v), not its host's %d", plugin, pgid, err, host.Process.Pid)
			}
			switch kill {
			case "host":
				err = host.Process.Kill()
			case "plugin":
				err = syscall.Kill(plugin, syscall.SIGKILL)
			default:
				err = syscall.Kill(-host.Process.Pid, syscall.SIGKILL)
			}
			if err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			// The host carries the marker too. One whose plugin died
			// fails its call and exits by itself.
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatal("the host still runs 30s after its plugin was SIGKILLed")
			}
			sandboxtest.AssertNoProcs(t, marker, time.Until(killed.Add(runProcsGoneWithin)))
			procsGone := time.Since(killed)
			assertContainersGone(t, seen, killed, runContainerGoneWithin)
			t.Logf("%s SIGKILLed (load average %s): the call's processes were gone %v after, its container %v after",
				kill, sandboxtest.LoadAverage(), procsGone.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
		})
	}
}

// waitCallSleep waits for the call's sleep, in its container, and
// returns it; a host that exits first fails the test with what it said.
func waitCallSleep(t *testing.T, marker string, exited <-chan struct{}, stderr *syncBuffer) []sandboxtest.Proc {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		procs, err := sandboxtest.HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range procs {
			if len(p.Args) > 0 && filepath.Base(p.Args[0]) == "sleep" {
				return []sandboxtest.Proc{p}
			}
		}
		select {
		case <-exited:
			t.Fatalf("the host exited before the call's sleep ran: %s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sleep of the call ran within 2m (host: %s)", stderr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// pluginPID is the PID of the plugin process that created container id,
// from its label.
func pluginPID(t *testing.T, id string) int {
	t.Helper()
	v := dockertest.Docker(t, "inspect", "--format", `{{index .Config.Labels "`+dockerbox.LabelPID+`"}}`, id)
	pid, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("container %.12s: plugin PID label %q", id, v)
	}
	return pid
}
