package dockerbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// warmPIDs lists the PIDs of the warm execs waiting in the container.
func warmPIDs(t *testing.T, c string) []string {
	t.Helper()
	var pids []string
	for _, line := range processesIn(t, c, true) {
		if f := strings.Fields(line); strings.HasSuffix(line, " pks-wrapper") {
			pids = append(pids, f[0])
		}
	}
	return pids
}

// waitWarmExecs waits until n warm execs wait in the container.
func waitWarmExecs(t *testing.T, c string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids := warmPIDs(t, c)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d warm execs in the container, want %d; its processes:\n%s", len(pids), n, psIn(t, c))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidReq prints the PID of the wrapper its command runs under (its
// parent), its environment and its stdin.
func pidReq(env string) sandbox.Request {
	return sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", `echo "$PPID $V"; cat; exit 5`},
		Env: []string{"V=" + env}, Stdin: []byte("in"),
	}
}

func TestExecWarmServesCallsOnce(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{"warm": 2, "resident": false})
	used := map[string]bool{}
	for i := range 6 {
		// Calls of different commands and environments: a warm exec
		// takes its call whole, so any of them serves any call.
		warm := waitWarmExecs(t, c, 2)
		env := fmt.Sprintf("v%d", i)
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), pidReq(env))
		var xe *sandbox.ExitError
		if !errors.As(err, &xe) || xe.Code != 5 {
			t.Fatalf("call %d: err = %v, want exit 5", i, err)
		}
		pid, rest, _ := strings.Cut(string(resp.Stdout), " ")
		if rest != env+"\nin" || resp.Stderr != nil {
			t.Fatalf("call %d: stdout %q stderr %q", i, resp.Stdout, resp.Stderr)
		}
		if used[pid] {
			t.Fatalf("call %d: process %s served two calls", i, pid)
		}
		used[pid] = true
		if !slices.Contains(warm, pid) {
			t.Errorf("call %d ran under %s, not in a warm exec %v", i, pid, warm)
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing ends every warm exec without running its command.
	waitWarmExecs(t, c, 0)
	if left := leftovers(t, c); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

func TestExecWarmAfterContainerRestart(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{"warm": 1, "resident": false})
	if _, err := sb.Spawn(ctxTimeout(t, time.Minute), pidReq("a")); err == nil {
		t.Fatal("want exit 5")
	}
	waitWarmExecs(t, c, 1)
	docker(t, "restart", "-t", "0", c)
	// The warm exec died with the restart: the call runs in a new one.
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), pidReq("a"))
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 5 || !strings.HasSuffix(string(resp.Stdout), " a\nin") {
		t.Fatalf("after restart: err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
	}
}

func TestExecWarmOff(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{"warm": 0, "resident": false})
	for range 2 {
		if _, err := sb.Spawn(ctxTimeout(t, time.Minute), pidReq("a")); err == nil {
			t.Fatal("want exit 5")
		}
	}
	time.Sleep(300 * time.Millisecond)
	if pids := warmPIDs(t, c); len(pids) > 0 {
		t.Errorf("warm execs with warm: 0: %v", pids)
	}
}
