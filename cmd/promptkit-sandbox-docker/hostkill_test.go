package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestHostSIGKILLLeavesNothing SIGKILLs the host CLI in the middle of a
// call that started a child, a setsid child and (but in a sidecar) a
// double-forked daemon, on each backend a host reaches here: nothing of
// the call is left 5 s later, no process (by marker) and no container of
// the call's own.
func TestHostSIGKILLLeavesNothing(t *testing.T) {
	dockertest.Require(t)
	image := dockertest.Image(t, dockertest.Busybox)
	label := dockertest.UniqueLabel(t)
	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.9.0")

	sidecar := "pks-hostkill-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	dockertest.Docker(t, "run", "-d", "--rm", "--network", "none", "--label", label, "--name", sidecar, image, "sleep", "600")

	cfg := filepath.Join(dir, "runtime.yaml")
	body := `spec:
  sandboxes:
    host:
      mode: direct
    fresh:
      mode: docker_run
      image: ` + image + `
    sidecar:
      mode: docker_exec
      container: ` + sidecar + `
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		child  = `sleep "$0" & `
		daemon = `(setsid sleep "$0" >/dev/null 2>&1 </dev/null &); `
		setsid = `setsid sleep "$0" & `
	)
	for _, tc := range []struct {
		box, script string
		sleeps      int
	}{
		{"host", child + daemon + setsid + `sleep "$0"`, 4},
		{"fresh", child + daemon + setsid + `sleep "$0"`, 4},
		// Through the resident, whose end sweeps the daemon too.
		{"sidecar", child + daemon + setsid + `sleep "$0"`, 4},
	} {
		box, script := tc.box, tc.script
		t.Run(box, func(t *testing.T) {
			marker := sandboxtest.NewMarker()
			host := exec.Command(cli, "spawn", "--plugin-dir", pluginDir, "--config", cfg, "--sandbox", box,
				"--timeout", "5m", "--", "sh", "-c", script, marker)
			// The plugins' socket directories go here, to be checked.
			tmp := t.TempDir()
			host.Env = append(os.Environ(), "TMPDIR="+tmp)
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })

			// Every sleep, the last one in the foreground.
			seen := waitSleeps(t, marker, tc.sleeps, time.Minute)
			if err := host.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()
			killed := time.Now()

			sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
			t.Logf("the call's processes were gone %v after the host's SIGKILL", time.Since(killed).Round(time.Millisecond))
			// The plugin outlives its host by its shutdown: it must not
			// die of the host's broken pipes first (SIGPIPE), and it
			// removes the socket directory the host could not.
			assertNoSocketDirs(t, tmp, killed.Add(plugin.ShutdownGrace+5*time.Second))
			if box == "fresh" {
				// The kill above lands in milliseconds; the removal that
				// follows goes at the engine's pace, which a loaded engine
				// (fuse-overlayfs here) has taken more than 5 s over.
				assertContainersGone(t, seen, killed, containerGoneWithin)
				t.Logf("the container was gone %v after the host's SIGKILL", time.Since(killed).Round(time.Millisecond))
			}
		})
	}
}

// containerGoneWithin bounds the removal of a killed call's container.
const containerGoneWithin = 30 * time.Second

// waitSleeps waits until n sleep processes carry marker and returns
// them. (The host, and docker's client, carry it too.)
func waitSleeps(t *testing.T, marker string, n int, within time.Duration) []sandboxtest.Proc {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		all, err := sandboxtest.HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		var procs []sandboxtest.Proc
		for _, p := range all {
			if len(p.Args) > 0 && filepath.Base(p.Args[0]) == "sleep" {
				procs = append(procs, p)
			}
		}
		if len(procs) >= n {
			return procs
		}
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of the call's %d sleeps after %v", len(procs), n, within)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// assertContainersGone checks the containers procs ran in are removed
// within the bound after killed.
func assertContainersGone(t *testing.T, procs []sandboxtest.Proc, killed time.Time, within time.Duration) {
	t.Helper()
	deadline := killed.Add(within)
	ids := map[string]bool{}
	for _, p := range procs {
		if p.Container == "" {
			t.Fatalf("process %v ran in no container", p)
		}
		ids[p.Container] = true
	}
	for id := range ids {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			out, err := exec.CommandContext(ctx, "docker", "ps", "-aq", "--no-trunc", "--filter", "id="+id).Output()
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(deadline) {
				_ = exec.Command("docker", "rm", "-f", id).Run()
				t.Fatalf("container %.12s still exists %v after the SIGKILL", id, within)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// assertNoSocketDirs waits until dir holds no plugin socket directory.
func assertNoSocketDirs(t *testing.T, dir string, deadline time.Time) {
	t.Helper()
	for {
		left, err := filepath.Glob(filepath.Join(dir, "promptkit-plugin-*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin socket directories left after the host's SIGKILL: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
