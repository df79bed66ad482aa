package sandboxtest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// watched is a call whose processes the suite watched in the target.
type watched struct {
	resp     sandbox.Response
	err      error
	took     time.Duration // from Spawn to its return
	seenAt   time.Duration // when the processes were first all seen, or the cancel (0: neither)
	gaveUp   bool          // cancelled before the processes all showed
	returned time.Time
	seen     []Proc // every process of the call seen while it ran
	marker   string
}

// runWatched runs /bin/sh with body after a prologue that reads the
// call's marker from stdin into $m and prints started-out and
// started-err; body runs its processes with "$m" as an argument. The
// marker comes on stdin so that only processes started for this call
// carry it: a warm container or exec prepared ahead of the call runs the
// same command line (and a pool keyed by the command line serves it). It watches the
// target until the call returns and, when cancel is set, cancels the
// call's context once need of them run (or once the longest a timeout
// case waits for a start has passed without them: gaveUp says so, and
// the caller decides what that proves).
func (r *runner) runWatched(t *testing.T, body string, need int, timeout time.Duration, cancel bool) watched {
	t.Helper()
	marker := NewMarker()
	req := sh(`read -r m; printf started-out; printf started-err >&2; ` + body)
	req.Stdin = []byte(marker + "\n")
	req.Timeout = timeout
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	t.Cleanup(func() {
		procs, _ := r.cell.Procs(marker)
		killProcs(procs)
	})

	type result struct {
		resp sandbox.Response
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		resp, err := r.sb.Spawn(ctx, req)
		done <- result{resp, err}
	}()
	w := watched{marker: marker}
	seen := map[proctest.ID]Proc{}
	giveUp := r.cell.KillTimeout
	for range timeoutAttempts - 1 {
		giveUp *= 3
	}
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	hang := time.NewTimer(timeout + giveUp + 2*r.cell.Slack)
	defer hang.Stop()
	for {
		select {
		case res := <-done:
			w.returned = time.Now()
			w.took = w.returned.Sub(start)
			w.resp, w.err = res.resp, res.err
			if res.resp.Err != res.err {
				t.Errorf("Response.Err = %v, want the error Spawn returned (%v)", res.resp.Err, res.err)
			}
			w.seen = slices.Collect(maps.Values(seen))
			t.Cleanup(func() { killProcs(w.seen) })
			return w
		case <-hang.C:
			t.Fatalf("Spawn has not returned %v after it was called", time.Since(start).Round(time.Millisecond))
		case <-tick.C:
			procs, err := r.cell.Procs(marker)
			if err != nil {
				t.Fatalf("listing the target's processes: %v", err)
			}
			for _, p := range procs {
				seen[p.ID] = p
			}
			switch {
			case w.seenAt != 0:
			case len(procs) >= need:
				w.seenAt = time.Since(start)
				if cancel {
					stop()
				}
			case cancel && time.Since(start) > giveUp:
				t.Logf("the call's processes did not show within %v; cancelling anyway", giveUp)
				w.seenAt = time.Since(start)
				w.gaveUp = true
				stop()
			}
		}
	}
}

// assertGone checks that at least need of the watched call's processes
// ran (else the test proves nothing) and that they are gone, as is
// anything else of them that Options.Remains names. Killing is
// asynchronous: they may take a moment after Spawn returned (the cell's
// Slack, or goneWithin if that is longer).
func (r *runner) assertGone(t *testing.T, w watched, need int) {
	t.Helper()
	if len(w.seen) < need {
		t.Errorf("saw %d of the call's processes run, want %d: the check proves nothing", len(w.seen), need)
	}
	within := max(goneWithin, r.cell.Slack)
	deadline := w.returned.Add(within)
	for {
		procs, err := r.cell.Procs(w.marker)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range w.seen {
			if p.Running() && !slices.ContainsFunc(procs, func(q Proc) bool { return q.ID == p.ID }) {
				procs = append(procs, p)
			}
		}
		var remains []string
		if len(procs) == 0 && r.cell.Remains != nil {
			remains = r.cell.Remains(t, w.seen)
		}
		if len(procs) == 0 && len(remains) == 0 {
			if late := time.Since(w.returned); late > 100*time.Millisecond {
				t.Logf("the call's processes were gone %v after Spawn returned", late.Round(time.Millisecond))
			}
			return
		}
		if time.Now().After(deadline) {
			var left []string
			for _, p := range procs {
				left = append(left, p.String())
			}
			t.Errorf("%v after Spawn returned, the call left behind:\n%s", within,
				strings.Join(append(left, remains...), "\n"))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
