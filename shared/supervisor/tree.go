package supervisor

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Process is what a walk of a process tree needs of a process.
type Process struct{ PID, PPID, PGID int }

// Processes lists the processes visible in /proc with their parents and
// process groups.
func Processes() []Process {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]Process, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		f := stat(n)
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgid, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Process{PID: pid, PPID: ppid, PGID: pgid})
	}
	return out
}

// stat returns the fields of /proc/PID/stat after the command name:
// state ppid pgrp ...; nil when there is no such process.
func stat(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat") // #nosec G304 -- pid is the name of a /proc entry that parsed as a number (see above)
	if err != nil {
		return nil
	}
	// The command name can hold anything, ")" included: the fields start
	// after the last one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// Stopped reports whether pid is stopped (SIGSTOP and its kin) or
// ptrace-stopped.
func Stopped(pid int) bool {
	f := stat(strconv.Itoa(pid))
	return len(f) > 0 && (f[0] == "T" || f[0] == "t")
}

// KillTree kills root and every process below it, needing nothing of
// any of them: root is stopped first, so it reaps none of its children
// while the walk runs (a reaped child's PID could be another process's
// by the time it is signalled), every descendant is stopped as it is
// found, so nothing forks past the walk, and then all get SIGKILL, which
// ends a stopped or ptrace-stopped process as it ends a running one.
// Orphans of a killed process go to the nearest child subreaper or
// init: all of them are already dying when root goes. It returns how
// many descendants it found.
func KillTree(root int) int {
	_ = syscall.Kill(root, syscall.SIGSTOP)
	n := killBelow(root)
	_ = syscall.Kill(root, syscall.SIGKILL)
	return n
}

// killBelow freezes every process below root, then kills them all, and
// says how many it found.
func killBelow(root int) int {
	pids := descendants(root, syscall.SIGSTOP)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return len(pids)
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
		for _, p := range Processes() {
			if found[p.PID] || !found[p.PPID] {
				continue
			}
			if sig != 0 {
				_ = syscall.Kill(p.PID, sig)
			}
			found[p.PID] = true
			out = append(out, p.PID)
			changed = true
		}
	}
	return out
}
