package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// LoadResult is what Load measured.
type LoadResult struct {
	Calls, Failures int
	Took            time.Duration
	// Before and After count this process's open descriptors and the
	// processes below it, before the load and once it has settled.
	FDsBefore, FDsAfter     int
	ProcsBefore, ProcsAfter int
}

func (r LoadResult) String() string {
	return fmt.Sprintf("%d calls, %d failed, in %v (%.0f calls/s); fds %d -> %d; processes below the test %d -> %d",
		r.Calls, r.Failures, r.Took.Round(time.Millisecond), float64(r.Calls)/r.Took.Seconds(),
		r.FDsBefore, r.FDsAfter, r.ProcsBefore, r.ProcsAfter)
}

// Load makes n calls of req on sb, concurrency at a time, and checks
// that every one succeeds with want on stdout, and that nothing grows:
// the descriptors this process holds and the processes below it are
// back to where they were within settle after the last call (a backend
// may close a connection or reap a client a moment later). It fails t
// with the figures otherwise, and returns them.
func Load(t *testing.T, sb sandbox.Sandbox, req sandbox.Request, want string, n, concurrency int, settle time.Duration) LoadResult {
	t.Helper()
	// A first call warms what a backend opens once (a connection, a
	// resident), which is not growth.
	if _, err := sb.Spawn(context.Background(), req); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	res := LoadResult{Calls: n, FDsBefore: countFDs(), ProcsBefore: countBelow(os.Getpid())}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := sb.Spawn(context.Background(), req)
			if err == nil && string(resp.Stdout) != want {
				err = fmt.Errorf("stdout %q, want %q", resp.Stdout, want)
			}
			if err != nil {
				mu.Lock()
				res.Failures++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Took = time.Since(start)
	deadline := time.Now().Add(settle)
	for {
		res.FDsAfter, res.ProcsAfter = countFDs(), countBelow(os.Getpid())
		if (res.FDsAfter <= res.FDsBefore && res.ProcsAfter <= res.ProcsBefore) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Log(res)
	if res.Failures > 0 {
		t.Errorf("%d of %d calls failed; the first: %v", res.Failures, n, firstErr)
	}
	if res.FDsAfter > res.FDsBefore || res.ProcsAfter > res.ProcsBefore {
		t.Errorf("resources grew: %v", res)
	}
	return res
}

func countFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// countBelow counts the processes below root, zombies included: a
// child nobody reaped is growth too.
func countBelow(root int) int {
	parent := map[int]int{}
	for _, p := range supervisor.Processes() {
		parent[p.PID] = p.PPID
	}
	n := 0
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				n++
				break
			}
		}
	}
	return n
}

// AssertNoProcs fails t, and kills them, if processes carrying marker
// still run within after the call.
func AssertNoProcs(t *testing.T, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		procs, err := HostProcs(marker)
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			killProcs(procs)
			t.Fatalf("%d processes of the calls are left %v after them: %v", len(procs), within, procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
