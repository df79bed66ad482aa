package main

import (
	"runtime"
	"sync"
)

// spareThreads is how many OS threads sandboxd makes at start and keeps
// idle for later.
//
// The agent's processes and sandboxd's threads share the sandbox's pids
// limit, and the Go runtime cannot live without a thread it asks for:
// an agent's fork bomb that took every pid while sandboxd needed one
// more thread (a goroutine waking another processor, a blocking
// syscall) ended sandboxd with "fatal error: newosproc". The runtime
// takes an idle thread before it makes a new one, and never ends an
// idle one, so threads made now are there when the pids are gone. 16
// cover the tools' blocking calls at once many times over, for 16 pids
// and 16 small stacks.
const spareThreads = 16

var reserveOnce sync.Once

// reserveSpareThreads reserves spareThreads, once per process; a second
// caller waits until they are made.
func reserveSpareThreads() { reserveOnce.Do(func() { reserveThreads(spareThreads) }) }

// reserveThreads has the runtime make n threads and leaves them idle:
// n goroutines each hold a thread of its own (LockOSThread) until all
// hold one, then let go of it and end, unlocked, so their threads go to
// the runtime's idle list rather than away.
func reserveThreads(n int) {
	var held, exit sync.WaitGroup
	held.Add(n)
	exit.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			held.Done()
			exit.Wait()
			runtime.UnlockOSThread()
		}()
	}
	held.Wait()
	exit.Done()
	done.Wait()
}
