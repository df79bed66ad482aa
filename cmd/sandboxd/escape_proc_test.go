package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
)

// escapers is a shell script that leaves the call every way a process
// can: a background child, a setsid child, setsid -f, a subshell's
// orphan, and a double-forked daemon (python, as the red team's was).
// Each sleeps with the marker ($0) as its argument, so the test finds it.
const escapers = `sleep 300 "$0" & setsid sleep 300 "$0" & setsid -f sleep 300 "$0"; (setsid sleep 300 "$0" >/dev/null 2>&1 </dev/null &); ` +
	`python3 -c 'import os,sys
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
os.execvp("sleep", ["sleep", "300", sys.argv[1]])' "$0"; `

// wantSleeps is how many of escapers' sleeps run at once.
const wantSleeps = 5

// escapeScript runs escapers with marker, then rest.
func escapeScript(marker, rest string) string {
	return "sh -c '" + strings.ReplaceAll(escapers+rest, "'", `'\''`) + "' " + marker
}

// waitSleeps waits until n sleeps carry marker.
func waitSleeps(t *testing.T, marker string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		procs, err := sandboxtest.HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for _, p := range procs {
			if len(p.Args) > 0 && filepath.Base(p.Args[0]) == "sleep" {
				count++
			}
		}
		if count >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of %d sleeps", count, n)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestNoProcessEscapes: whatever a Bash command leaves running —
// setsid children, setsid -f, double-forked daemons — dies when the call
// ends, when its timeout fires, when KillShell stops its shell, when
// sandboxd is told to stop, and when sandboxd is SIGKILLed.
func TestNoProcessEscapes(t *testing.T) {
	t.Run("call ends", func(t *testing.T) {
		s := startHTTP(t, "--workspace", t.TempDir())
		cs := s.connect(t)
		marker := sandboxtest.NewMarker()
		if got := callTool(t, cs, "Bash", map[string]any{"command": escapeScript(marker, "echo done")}); !strings.Contains(got, "done") {
			t.Fatalf("Bash: %q", got)
		}
		sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	})
	t.Run("timeout", func(t *testing.T) {
		s := startHTTP(t, "--workspace", t.TempDir())
		cs := s.connect(t)
		marker := sandboxtest.NewMarker()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": escapeScript(marker, `sleep 300 "$0"`), "timeout": 3000}})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(res); !strings.Contains(got, "timed out") && !strings.Contains(got, "timeout") {
			t.Logf("Bash: %q", got)
		}
		sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	})
	t.Run("KillShell", func(t *testing.T) {
		s := startHTTP(t, "--workspace", t.TempDir())
		cs := s.connect(t)
		marker := sandboxtest.NewMarker()
		out := callTool(t, cs, "Bash", map[string]any{"command": escapeScript(marker, `sleep 300 "$0"`), "run_in_background": true})
		id := strings.TrimPrefix(out, "Started background shell ")
		waitSleeps(t, marker, wantSleeps+1)
		callTool(t, cs, "KillShell", map[string]any{"shell_id": id})
		sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startHTTP(t, "--workspace", t.TempDir(), "--shutdown-grace", "1s")
			cs := s.connect(t)
			marker := sandboxtest.NewMarker()
			callTool(t, cs, "Bash", map[string]any{"command": escapeScript(marker, `sleep 300 "$0"`), "run_in_background": true})
			fg := sandboxtest.NewMarker()
			go func() {
				_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
					"command": escapeScript(fg, `sleep 300 "$0"`), "timeout": 600000}})
			}()
			waitSleeps(t, marker, wantSleeps+1)
			waitSleeps(t, fg, wantSleeps+1)
			// As root, the home sandboxd made for the agent's user, which
			// a SIGKILL leaves behind.
			home := strings.TrimSpace(callTool(t, cs, "Bash", map[string]any{"command": "echo $HOME"}))
			if strings.HasPrefix(home, os.TempDir()+"/sandboxd-home-") {
				t.Cleanup(func() { os.RemoveAll(home) })
			}
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = s.cmd.Wait()
			sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
			sandboxtest.AssertNoProcs(t, fg, 5*time.Second)
		})
	}
}
