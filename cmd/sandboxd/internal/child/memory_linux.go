package child

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// limitMemory caps the address space of the process pid and puts it
// first in line for the OOM killer: in a container whose memory limit
// is near sandboxd's, the child should die, not the daemon.
func limitMemory(pid int, bytes uint64) error {
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: bytes, Max: bytes}, nil); err != nil {
		return err
	}
	// Raising one's own child's score needs no privilege; if /proc is
	// not there the address-space cap still holds.
	_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("1000"), 0)
	return nil
}
