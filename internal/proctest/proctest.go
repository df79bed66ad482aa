// Package proctest checks, through /proc, that processes a test started
// are gone. It is for tests only, and Linux only.
//
// A process counts as gone once it is a zombie (or dead): a zombie holds
// no resources and runs no code, and reaping it is its parent's business,
// which a container's init may never do. PIDs are recycled, so a process
// the test could see running is named by its PID and start time (an ID);
// a bare PID is for a process that may already be gone when the test
// first learns of it.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goneWithin bounds the wait for a process to leave: signals are
// asynchronous, so a process killed a moment ago may take a little while,
// but never long.
const goneWithin = 5 * time.Second

// ID names one process for the lifetime of a test: PIDs are recycled, a
// PID plus its start time is not.
type ID struct {
	PID   int
	Start string // starttime field of /proc/PID/stat, in clock ticks since boot
}

// Stat returns pid's command name, state letter and start time from
// /proc/PID/stat; ok is false when there is no such process.
func Stat(pid int) (comm string, state byte, start string, ok bool) {
	b, err := os.ReadFile(statPath(pid))
	if err != nil {
		return "", 0, "", false
	}
	return parseStat(b)
}

// parseStat splits the contents of /proc/PID/stat. comm may contain spaces
// and parentheses; the fields after the last ')' are fixed: state is the
// first, starttime the twentieth.
func parseStat(b []byte) (comm string, state byte, start string, ok bool) {
	open := bytes.IndexByte(b, '(')
	f, end := statFields(b)
	if open < 0 || end < open || len(f) < 20 {
		return "", 0, "", false
	}
	return string(b[open+1 : end]), f[0][0], f[19], true
}

// statFields are the fields of /proc/PID/stat after the command name
// (state first), and where the name ends; end is -1 when b has no name.
func statFields(b []byte) (fields []string, end int) {
	end = bytes.LastIndexByte(b, ')')
	if end < 0 {
		return nil, -1
	}
	return strings.Fields(string(b[end+1:])), end
}

func statPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/stat" }

func zombie(state byte) bool { return state == 'Z' || state == 'X' }

// Running reports whether the process still exists, is the same process
// (same start time) and is not a zombie.
func (id ID) Running() bool {
	_, state, start, ok := Stat(id.PID)
	return ok && start == id.Start && !zombie(state)
}

// Alive reports whether some process with this PID exists and is not a
// zombie. It cannot tell a recycled PID from the original process: prefer
// an ID where the process is known to be running when the test learns of
// it.
func Alive(pid int) bool {
	b, err := os.ReadFile(statPath(pid))
	if err != nil {
		return false
	}
	// Present but unparsable: not shown to be gone.
	_, state, _, ok := parseStat(b)
	return !ok || !zombie(state)
}

// Identify records the start times of pids, all of which must be running
// (the test fails at once otherwise). Whatever the outcome, nothing among
// them outlives the test: survivors are SIGKILLed in t.Cleanup.
func Identify(t testing.TB, pids ...int) []ID {
	t.Helper()
	ids := make([]ID, 0, len(pids))
	for _, pid := range pids {
		_, state, start, ok := Stat(pid)
		if !ok || state == 'Z' {
			t.Fatalf("process %d is not running before the test acts (state %q)", pid, state)
		}
		ids = append(ids, ID{pid, start})
	}
	t.Cleanup(func() {
		for _, id := range ids {
			if id.Running() {
				_ = syscall.Kill(id.PID, syscall.SIGKILL)
			}
		}
	})
	return ids
}

// AssertGone fails the test (Fatalf, naming the survivors) if any of ids
// is still running after a bounded wait of five seconds.
func AssertGone(t testing.TB, ids ...ID) {
	t.Helper()
	deadline := time.Now().Add(goneWithin)
	for {
		var alive []int
		for _, id := range ids {
			if id.Running() {
				alive = append(alive, id.PID)
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

// AssertCommGone is AssertGone for a process that may be gone before the
// test could record its start time: it fails (Fatalf, after SIGKILLing
// it) if pid still runs a command named comm after five seconds. A PID
// recycled by another command counts as gone.
func AssertCommGone(t testing.TB, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(goneWithin)
	for {
		c, state, _, ok := Stat(pid)
		if !ok || zombie(state) || c != comm {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d (%s) survived", pid, comm)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Gone waits up to five seconds for pid to be gone (see Alive) and, if it
// is not, SIGKILLs it and reports the failure with Errorf, so the test
// goes on; what names the process in the message. A process already gone
// when the test learnt its PID passes.
func Gone(t testing.TB, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(goneWithin)
	for Alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s (pid %d) is still running", what, pid)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ReadPIDs polls file for up to ten seconds until it holds at least n
// PIDs, separated by white space (one per line, as `echo $! >> file`
// writes them), and returns them all.
func ReadPIDs(t testing.TB, file string, n int) []int {
	t.Helper()
	return ReadPIDsWithin(t, file, n, 10*time.Second)
}

// ReadPIDsWithin is ReadPIDs with a deadline of its own, for PIDs written
// by a command that takes longer to start.
func ReadPIDsWithin(t testing.TB, file string, n int, within time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, _ := os.ReadFile(file) // #nosec G304 -- the PID file the test names
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: bad pid %q", file, f)
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

// WaitFile polls for up to ten seconds until path exists.
func WaitFile(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux the project runs on.
const userHZ = 100

// CPU is the CPU time pid has used, user and system, its reaped
// children's included (utime, stime, cutime and cstime of
// /proc/PID/stat), in steps of 10 ms; ok is false when there is no such
// process.
func CPU(pid int) (used time.Duration, ok bool) {
	b, err := os.ReadFile(statPath(pid))
	if err != nil {
		return 0, false
	}
	f, _ := statFields(b)
	if len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, true
}
