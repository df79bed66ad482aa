package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// progressHook prints the machine's uptime (/proc/uptime is not
// namespaced: a container reads the host's) every 100 ms for 2 s, so the
// caller can tell how long each line took to reach it.
const progressHook = `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do cut -d' ' -f1 /proc/uptime; sleep 0.1; done`

// uptime is the machine's uptime, as /proc/uptime says it.
func uptime(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestExecStreamsOutput: a hook printing a line every 100 ms for 2 s
// shows its first line at the exec caller within 300 ms of printing it,
// run in a docker_run container through the docker plugin, cold and
// through a serve: backend, plugin, host and exec pass output on as it
// comes. Every line arrives, in order, and exec exits 0.
func TestExecStreamsOutput(t *testing.T) {
	image := dockertest.Image(t, dockertest.Busybox)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "stream_" + hex.EncodeToString(b[:])
	dockertest.Cleanup(t, labelName+"="+name)
	cfg := writeConfig(t, shortTempDir(t), `spec:
  sandboxes:
    `+name+`:
      mode: docker_run
      image: `+image+`
      network: none
`)
	plugins := dockerPluginDir(t)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	for _, through := range []string{"cold", "serve"} {
		t.Run(through, func(t *testing.T) {
			args := []string{"--config", cfg, "--sandbox", name, "--timeout", "30s", "--plugin-dir", plugins}
			if through == "serve" {
				startServe(t, sock, nil, "--config", cfg, "--plugin-dir", plugins)
				args = append(args, "--socket", sock)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, _, stderr := hookCommand(ctx, t, isolated(t), nil, append(args, "--", "sh", "-c", progressHook)...)
			cmd.Stdout = nil
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var lags []time.Duration
			lines := bufio.NewScanner(out)
			for lines.Scan() {
				printed, err := strconv.ParseFloat(lines.Text(), 64)
				if err != nil {
					t.Fatalf("line %q: %v", lines.Text(), err)
				}
				lags = append(lags, time.Duration((uptime(t)-printed)*float64(time.Second)))
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exec: %v\n%s", err, stderr)
			}
			if len(lags) != 20 {
				t.Fatalf("%d lines, want 20; stderr:\n%s", len(lags), stderr)
			}
			t.Logf("%s: each line's lag from its print to exec's caller: %v", through, lags)
			// /proc/uptime has 10 ms steps.
			if lags[0] > 300*time.Millisecond {
				t.Errorf("the first line reached exec's caller %v after the hook printed it, want within 300ms", lags[0])
			}
		})
	}
}
