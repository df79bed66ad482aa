package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threads is this process's count of OS threads.
func threads(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestReserveThreadsKeepsThem: the threads reserveThreads makes are
// still there after it returns and after a garbage collection: idle,
// for the runtime to take when no new one can be made.
//
// Each of the n goroutines held a thread of its own at once, so the
// process had at least n of them plus sysmon's; it may have had idle
// ones already, which the reserve took first, so the count to expect
// is that floor or the count before, whichever is more. A thread that
// ended (a goroutine leaving while locked to it) would take the count
// below it.
func TestReserveThreadsKeepsThem(t *testing.T) {
	before := threads(t)
	reserveThreads(spareThreads)
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
	want := max(before, spareThreads+1)
	if after := threads(t); after < want {
		t.Errorf("%d threads after reserving %d, %d before; want at least %d", after, spareThreads, before, want)
	}
}
