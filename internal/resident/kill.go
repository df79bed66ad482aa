package resident

import (
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
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
		for _, p := range supervisor.Processes() {
			if found[p.PID] {
				continue
			}
			if p.PGID == root || found[p.PPID] {
				_ = syscall.Kill(p.PID, syscall.SIGSTOP)
				found[p.PID] = true
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
