package main

import (
	"os"
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
func TestReserveThreadsKeepsThem(t *testing.T) {
	before := threads(t)
	reserveThreads(spareThreads)
	time.Sleep(100 * time.Millisecond)
	if after := threads(t); after < before+spareThreads-2 {
		// -2: the runtime may have had a thread or two idle already,
		// which the reserve then took first.
		t.Errorf("%d threads after reserving %d, %d before", after, spareThreads, before)
	}
}
