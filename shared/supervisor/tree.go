package supervisor

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what the tree walks need of a process: its parent.
type procStat struct{ pid, ppid int }

// procs lists the processes visible in /proc with their parents.
func procs() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// The command name can hold anything, ")" included: the fields
		// start after the last one. They are: state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		out = append(out, procStat{pid: pid, ppid: ppid})
	}
	return out
}

// descendants lists every process below root, each sent sig as it is
// found (SIGSTOP freezes the tree, so nothing forks past the walk; zero
// sends nothing). The walk repeats until a pass finds nothing new: a
// process created while it ran is found on the next pass.
func descendants(root int, sig syscall.Signal) []int {
	found := map[int]bool{root: true}
	var out []int
	for changed := true; changed; {
		changed = false
		for _, p := range procs() {
			if found[p.pid] || !found[p.ppid] {
				continue
			}
			if sig != 0 {
				_ = syscall.Kill(p.pid, sig)
			}
			found[p.pid] = true
			out = append(out, p.pid)
			changed = true
		}
	}
	return out
}
