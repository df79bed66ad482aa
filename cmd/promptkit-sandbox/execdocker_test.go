package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// labelName is the label the docker plugin gives a sandbox's containers,
// naming the sandbox (dockerbox.LabelName; the literal keeps the docker
// client out of this test binary).
const labelName = "org.promptkit.sandbox.name"

// dockerConfig is a config of two docker_run sandboxes with unique names,
// so their containers can be told from any other test's: warm, with a
// pool of one, and cold, without. It returns the config and each
// sandbox's label selector, whose containers are removed when the test
// ends.
func dockerConfig(t testing.TB) (cfg, warm, warmLabel, cold, coldLabel string) {
	t.Helper()
	image := dockertest.Image(t, dockertest.Hooks)
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	warm, cold = "warm_"+suffix, "cold_"+suffix
	warmLabel, coldLabel = labelName+"="+warm, labelName+"="+cold
	dockertest.Cleanup(t, warmLabel)
	dockertest.Cleanup(t, coldLabel)
	// Before those, and after a serve started later has stopped: the
	// engine may still be removing a call's container when exec exits
	// ("Removal In Progress"), which a forced removal then reports as a
	// survivor.
	t.Cleanup(func() {
		waitRemoved(t, warmLabel)
		waitRemoved(t, coldLabel)
	})
	cfg = writeConfig(t, shortTempDir(t), `spec:
  sandboxes:
    `+warm+`:
      mode: docker_run
      image: `+image+`
      pool: 1
    `+cold+`:
      mode: docker_run
      image: `+image+`
`)
	return cfg, warm, warmLabel, cold, coldLabel
}

// TestExecServeKeepsAWarmPool: through serve, a docker_run sandbox's warm
// pool outlives each exec: every call after the first runs in the
// container that was already up, waiting, before the call began; and
// serve's SIGTERM removes the one left warm.
func TestExecServeKeepsAWarmPool(t *testing.T) {
	dockertest.Require(t)
	cfg, warm, label, _, _ := dockerConfig(t)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	srv := startServe(t, sock, nil, "--config", cfg, "--plugin-dir", dockerPluginDir(t))

	const hook = "cat >/dev/null; cat /etc/hostname" // the container's short ID
	for i := range 4 {
		var ready []string
		if i > 0 {
			ready = waitContainers(t, label, 1)
		}
		r := runExec(t, isolated(t), []byte(`{"n":1}`), "--socket", sock, "--config", cfg, "--sandbox", warm,
			"--timeout", "30s", "--", "sh", "-c", hook)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("call %d: %+v\nserve:\n%s", i, r, srv.stderr)
		}
		ran := strings.TrimSpace(r.stdout)
		if i > 0 && (ran == "" || !strings.HasPrefix(ready[0], ran)) {
			t.Errorf("call %d ran in container %q, not in the warm one %s", i, ran, ready[0])
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, srv.stderr)
	}
	dockertest.AssertNoContainers(t, label)
}

// TestExecDockerKilled: SIGKILL of an exec whose call runs in a
// docker_run container kills the container, and it is removed: through serve,
// which sees the call's stream break; cold, where the docker plugin sees
// its host die.
func TestExecDockerKilled(t *testing.T) {
	dockertest.Require(t)
	cfg, _, _, cold, label := dockerConfig(t)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	pluginDir := dockerPluginDir(t)
	startServe(t, sock, nil, "--config", cfg, "--plugin-dir", pluginDir)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"served", []string{"--socket", sock}},
		{"cold", []string{"--plugin-dir", pluginDir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := append(append([]string{"--config", cfg, "--sandbox", cold, "--timeout", "5m"}, tc.args...), "--", "sleep", "300")
			cmd, _, stderr := hookCommand(ctx, t, isolated(t), nil, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			waitContainers(t, label, 1)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			killed := time.Now()
			waitContainers(t, label, 0)
			t.Logf("the call's container was killed %v after exec's SIGKILL (exec's stderr: %q)", time.Since(killed).Round(time.Millisecond), stderr)
			waitRemoved(t, label)
			t.Logf("the call's container was removed %v after exec's SIGKILL", time.Since(killed).Round(time.Millisecond))
		})
	}
}

// waitContainers waits, up to 30 s (a loaded engine removes containers
// slowly), until exactly n running containers carry the label, and
// returns their full IDs.
func waitContainers(t testing.TB, label string, n int) []string {
	t.Helper()
	return waitPS(t, label, n, "running")
}

// waitRemoved waits, up to 30 s, until no container carries the label,
// in any state.
func waitRemoved(t testing.TB, label string) {
	t.Helper()
	waitPS(t, label, 0, "existing", "--all")
}

func waitPS(t testing.TB, label string, n int, what string, flags ...string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		args := append([]string{"ps", "-q", "--no-trunc", "--filter", "label=" + label}, flags...)
		ids := strings.Fields(dockertest.Docker(t, args...))
		if len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s containers labelled %s after 30s, want %d: %v", len(ids), what, label, n, ids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
