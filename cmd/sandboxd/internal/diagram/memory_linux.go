package diagram

import "golang.org/x/sys/unix"

// limitMemory caps the address space of the process pid.
func limitMemory(pid int, bytes uint64) error {
	return unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: bytes, Max: bytes}, nil)
}
