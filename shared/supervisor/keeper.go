package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// KeeperName is argv[0] of a keeper: the host starts its own binary as
// KeeperName DIR, with the read end of a pipe as fd 3, once it has made
// DIR, the cgroup its calls' cgroups go in. The keeper waits for the end
// of that pipe, which comes when the host exits, however it exits, and
// then kills every process in DIR and removes it: a host SIGKILLed in
// the middle of its calls leaves nothing running.
const KeeperName = "promptkit-sandbox-keeper"

func keep(dir string) int {
	ctl := os.NewFile(3, "control")
	if ctl == nil {
		return 125
	}
	syscall.CloseOnExec(3)
	releaseStdio()
	buf := make([]byte, 64)
	for {
		if _, err := ctl.Read(buf); err != nil {
			break
		}
	}
	_ = KillCgroup(dir)
	RemoveCgroup(dir, 5*time.Second)
	return 0
}

// KillCgroup kills every process in the cgroup dir and in the cgroups
// below it (cgroup.kill, Linux 5.14 and later).
func KillCgroup(dir string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) // #nosec G703 -- dir is the cgroup the host made and handed the keeper
}

// RemoveCgroup removes the cgroup dir and those below it once they are
// empty, waiting up to within for the processes in them to go (a kill
// takes effect asynchronously). It reports whether dir is gone.
func RemoveCgroup(dir string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		// A call's cgroup has no cgroups below it: one rmdir, no listing.
		err := syscall.Rmdir(dir)
		if err != nil && !os.IsNotExist(err) {
			err = removeTree(dir)
		}
		if err == nil || os.IsNotExist(err) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// removeTree removes dir's child cgroups, then dir. Files in a cgroup
// are the kernel's: only directories are removed, with rmdir.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return syscall.Rmdir(dir)
}
