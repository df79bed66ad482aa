package kubecluster

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// WriteShimTrees writes, at most max lines, what runs below this
// cluster's runtime shims: each process's PID, state and command line,
// indented under its parent. After an exec that stalled in the runtime
// (containerd's "get state ... context deadline exceeded"), it shows
// what the shim waited on: a runc that never returned, a call's process
// left stopped (state T), one stuck in the kernel (state D).
func (c *Cluster) WriteShimTrees(w io.Writer, max int) {
	procs := supervisor.Processes()
	children := make(map[int][]int, len(procs))
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	shims := c.shims(procs)
	if len(shims) == 0 {
		return
	}
	fmt.Fprintf(w, "kubecluster: the processes below the cluster's %d runtime shims:\n", len(shims))
	lines := 0
	var walk func(pid, depth int)
	walk = func(pid, depth int) {
		lines++
		switch {
		case lines == max+1:
			fmt.Fprintln(w, "  …")
			return
		case lines > max:
			return
		}
		_, state, _, _ := proctest.Stat(pid)
		line := commandLine(pid)
		if len(line) > 160 {
			line = line[:160] + "…"
		}
		fmt.Fprintf(w, "  %s%d %c %s\n", strings.Repeat("  ", depth), pid, state, line)
		kids := children[pid]
		slices.Sort(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, s := range shims {
		walk(s, 0)
	}
}

// shims are the PIDs, in order, of this cluster's runtime shims among
// procs.
func (c *Cluster) shims(procs []supervisor.Process) []int {
	var pids []int
	for _, p := range procs {
		if c.isOurShim(p.PID) {
			pids = append(pids, p.PID)
		}
	}
	slices.Sort(pids)
	return pids
}

// isOurShim reports whether pid is a runtime shim of this cluster's
// containerd, not of Docker's: its command line names our state
// directory (our containerd's socket).
func (c *Cluster) isOurShim(pid int) bool {
	return strings.HasPrefix(program(pid), "containerd-shim") && ours(c.l, pid)
}
