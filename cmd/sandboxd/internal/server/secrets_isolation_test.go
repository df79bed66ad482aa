package server

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// TestSecretsStayWithTheirCall: a background shell started with a
// secret holds it in its environment while it runs; a later call that
// names no secrets reads every /proc/PID/environ it can, hex-encoded so
// that the scrubber cannot recognise the value, and must not find it,
// while it still sees the process. As root the commands run as another
// user (--run-as), as the docs advise: root's own CAP_SYS_PTRACE would
// pass over the isolation.
func TestSecretsStayWithTheirCall(t *testing.T) {
	t.Parallel()
	if err := shell.IsolationAvailable(); err != nil {
		ci.Skipf(t, "no isolation between calls (Landlock) on this host: %v", err)
	}
	cfg := Config{Secrets: map[string]string{"MY_SECRET": registered}}
	if os.Getuid() == 0 {
		ws := filepath.Join(proctest.OpenTempDir(t, "sandboxd-secret-"), "ws")
		mustDo(t, os.Mkdir(ws, 0o755))
		mustDo(t, os.Lchown(ws, agentUID, agentUID))
		cfg.Workspaces = []Workspace{{Dir: ws}}
		cfg.RunAs = &syscall.Credential{Uid: agentUID, Gid: agentUID, Groups: []uint32{}}
	}
	d := startDaemon(t, cfg)
	cs := d.connect(t, streamable)

	holder := shellID.FindString(ok(t, cs, "Bash", map[string]any{"command": "exec sleep 300", "run_in_background": true, "secrets": []string{"MY_SECRET"}}))
	defer ok(t, cs, "KillShell", map[string]any{"shell_id": holder})

	const dump = `until pgrep -x sleep >/dev/null; do sleep 0.05; done; echo sleeper-seen; ` +
		`for f in /proc/[0-9]*/environ; do od -An -v -tx1 "$f" 2>/dev/null | tr -d ' \n'; echo; done`
	got := ok(t, cs, "Bash", map[string]any{"command": dump})
	if !strings.Contains(got, "sleeper-seen") {
		t.Errorf("the later call did not see the earlier call's process:\n%.300s", got)
	}
	if strings.Contains(got, hex.EncodeToString([]byte(registered))) {
		t.Errorf("the later call read the earlier call's secret from /proc/PID/environ")
	}
}
