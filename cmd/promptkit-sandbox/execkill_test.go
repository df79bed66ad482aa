package main

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// TestExecKilledLeavesNothing ends exec in the middle of a call whose hook
// started a child and a setsid child, cold and through a serve: SIGKILL,
// what PromptKit does on its timeout, leaves no process of the call
// behind; SIGTERM cancels the call, which exits 130, the same. A serve
// goes on serving after a call of it was killed.
func TestExecKilledLeavesNothing(t *testing.T) {
	dir := shortTempDir(t)
	cfg := writeConfig(t, dir, directConfig)
	sock := filepath.Join(dir, "s.sock")
	srv := startServe(t, sock, nil, "--config", cfg)
	// The hook's shell, its child and its setsid child write their PIDs,
	// then it waits, as a hook stuck on a slow call would.
	const hook = `echo $$ >> "$0"; sleep 300 & echo $! >> "$0"; setsid sleep 300 & echo $! >> "$0"; wait`

	for _, tc := range []struct {
		name   string
		socket []string
		sig    syscall.Signal
		code   int // exit code, -1 for killed by the signal
	}{
		{"cold SIGKILL", nil, syscall.SIGKILL, -1},
		{"served SIGKILL", []string{"--socket", sock}, syscall.SIGKILL, -1},
		{"cold SIGTERM", nil, syscall.SIGTERM, exitInterrupted},
		{"served SIGTERM", []string{"--socket", sock}, syscall.SIGTERM, exitInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(shortTempDir(t), "pids")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := append(append([]string{"--config", cfg, "--sandbox", "host", "--timeout", "5m"}, tc.socket...), "--", "sh", "-c", hook, pidFile)
			cmd, _, stderr := hookCommand(ctx, t, isolated(t), nil, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			ids := proctest.Identify(t, proctest.ReadPIDs(t, pidFile, 3)...)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", got, tc.code, stderr)
			}
			proctest.AssertGone(t, ids...)
		})
	}
	if r := runExec(t, isolated(t), nil, "--socket", sock, "--config", cfg, "--sandbox", "host", "--", "echo", "still"); r.code != 0 || r.stdout != "still\n" {
		t.Errorf("serve after its calls were killed: %+v\n%s", r, srv.stderr)
	}
}
