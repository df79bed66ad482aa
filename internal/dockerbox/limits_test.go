package dockerbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestRunLimitsMountsUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hook.txt"), []byte("mounted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{
		"mounts": []any{dir + ":/hooks:ro"}, "memory": "64m", "cpus": "0.5", "pids_limit": 32,
		"read_only": true, "user": "1000:1000", "workdir": "/hooks", "network": "none",
	})
	script := `cat hook.txt; id -u; touch /hooks/x 2>/dev/null && echo hooks-writable; touch /x 2>/dev/null && echo root-writable
m=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes); echo "mem $m"
p=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max); echo "pids $p"
q=$(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"); echo "cpu $q"`
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", script}})
	if err != nil {
		t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
	}
	want := "mounted\n1000\nmem 67108864\npids 32\ncpu 50000 100000\n"
	if got := string(resp.Stdout); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}
