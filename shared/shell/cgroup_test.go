package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// TestCallCgroupsMadeAhead: calls take cgroups made ahead of them, and
// each call's cgroup is gone soon after it ends, though its result does
// not wait for that: once the calls are over, the host's cgroup holds
// the spares alone, each new and empty, and nothing a call left.
func TestCallCgroupsMadeAhead(t *testing.T) {
	cg, err := newCallCgroup()
	if err != nil {
		ci.Skipf(t, "no cgroup for a call here: %v", err)
	}
	cg.release()
	t.Setenv(ContainmentEnv, string(ContainCgroup))
	used := map[string]bool{}
	for range 5 {
		resp, err := Run(context.Background(), sh(`cat /proc/self/cgroup`), Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		_, path, _ := strings.Cut(strings.TrimSpace(string(resp.Stdout)), "0::")
		used[filepath.Base(path)] = true
	}
	if len(used) != 5 {
		t.Fatalf("5 calls ran in %d cgroups: %v", len(used), used)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, err := os.ReadDir(hostCgroups.dir)
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, e := range entries {
			if e.IsDir() {
				calls = append(calls, e.Name())
			}
		}
		left := 0
		for _, name := range calls {
			if used[name] {
				left++
			}
		}
		if left == 0 && len(calls) <= spareCgroups {
			for _, name := range calls {
				procs, err := os.ReadFile(filepath.Join(hostCgroups.dir, name, "cgroup.procs"))
				if err != nil || len(procs) != 0 {
					t.Errorf("spare cgroup %s holds %q (%v)", name, procs, err)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host's cgroup holds %v 10 s after the calls (%d of them the calls'), want at most %d spares", calls, left, spareCgroups)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
