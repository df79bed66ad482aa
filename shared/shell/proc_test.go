package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procID names one process for the lifetime of a test: PIDs are recycled,
// a PID plus its start time is not.
type procID struct {
	pid   int
	start string
}

// procState returns the state letter of pid from /proc/PID/stat and its
// start time; ok is false when there is no such process.
func procState(pid int) (state byte, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// comm may contain spaces and parentheses; the fields after the last
	// ')' are fixed: state is the first, starttime the twentieth.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	f := strings.Fields(string(rest))
	if len(f) < 20 {
		return 0, "", false
	}
	return f[0][0], f[19], true
}

// running reports whether the process still exists and is not a zombie
// (a zombie holds no resources and runs no code; reaping it is its
// parent's business, and our container's init may never do it).
func (id procID) running() bool {
	state, start, ok := procState(id.pid)
	return ok && start == id.start && state != 'Z' && state != 'X'
}

// identify records the start times of pids, all of which must be running.
func identify(t *testing.T, pids []int) []procID {
	t.Helper()
	ids := make([]procID, 0, len(pids))
	for _, pid := range pids {
		state, start, ok := procState(pid)
		if !ok || state == 'Z' {
			t.Fatalf("process %d is not running before the test acts (state %q)", pid, state)
		}
		ids = append(ids, procID{pid, start})
	}
	// Whatever the outcome, nothing the test started outlives it.
	t.Cleanup(func() {
		for _, id := range ids {
			if id.running() {
				_ = syscall.Kill(id.pid, syscall.SIGKILL)
			}
		}
	})
	return ids
}

// assertAllGone fails the test if any of ids is still running after a
// bounded wait. Signals are asynchronous, so a process killed a moment ago
// may take a little while to leave; it must never take long.
func assertAllGone(t *testing.T, ids []procID) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var alive []int
		for _, id := range ids {
			if id.running() {
				alive = append(alive, id.pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", alive)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readPIDs polls file until it holds n PIDs, one per line.
func readPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		var pids []int
		for _, line := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("%s: bad pid %q", file, line)
			}
			pids = append(pids, pid)
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want %d pids, have %v", file, n, pids)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func pidFile(t *testing.T) string {
	return filepath.Join(t.TempDir(), "pids")
}
