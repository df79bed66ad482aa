package resident

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// freezeTree stops the call led by root and everything it started: the
// members of its process group and, walking parent links, descendants
// that moved to groups or sessions of their own. Each is stopped as it is
// found, so nothing forks past the walk; killing them all is the
// caller's next step (killFrozen), once it has recorded why.
func freezeTree(root int) []int {
	found := map[int]bool{root: true}
	_ = syscall.Kill(root, syscall.SIGSTOP)
	for changed := true; changed; {
		changed = false
		for _, p := range procs() {
			if found[p.pid] {
				continue
			}
			if p.pgrp == root || found[p.ppid] {
				_ = syscall.Kill(p.pid, syscall.SIGSTOP)
				found[p.pid] = true
				changed = true
			}
		}
	}
	pids := make([]int, 0, len(found))
	for pid := range found {
		pids = append(pids, pid)
	}
	return pids
}

// killFrozen kills what freezeTree stopped.
func killFrozen(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

type procStat struct{ pid, ppid, pgrp int }

// procs lists the processes visible in /proc with their parent and group.
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
		// start after the last one. They are: state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgrp, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, procStat{pid: pid, ppid: ppid, pgrp: pgrp})
	}
	return out
}
