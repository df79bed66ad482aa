package main

import (
	"fmt"
	"syscall"
)

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name.
const rlimitNPROC = 6

// minPidsLimit is the least --pids-limit takes: sandboxd's own threads
// count against it, and its spare ones are made before it applies.
const minPidsLimit = 64

// limitProcesses holds this process's user to n tasks, processes and
// threads alike (RLIMIT_NPROC, soft and hard, so no command of the
// agent's may raise it), for a sandbox whose runtime has no pids limit
// of its own (a Kubernetes Pod). The kernel counts every task of the
// user, sandboxd's included, and checks the count at each fork or clone
// against the forking task's limit: every command sandboxd starts
// inherits it, and so does sandboxd, which the spare threads, made
// first, keep alive when the agent has taken the rest (see
// spareThreads).
func limitProcesses(n uint64) error {
	reserveSpareThreads()
	lim := syscall.Rlimit{Cur: n, Max: n}
	if err := syscall.Setrlimit(rlimitNPROC, &lim); err != nil {
		return fmt.Errorf("--pids-limit %d: %w", n, err)
	}
	return nil
}

// checkPidsLimit refuses a --pids-limit sandboxd's own threads would use
// up, before anything starts.
func checkPidsLimit(n uint64) error {
	if n != 0 && n < minPidsLimit {
		return fmt.Errorf("--pids-limit %d: want at least %d (sandboxd's own threads count against it), or 0 for none", n, minPidsLimit)
	}
	return nil
}
