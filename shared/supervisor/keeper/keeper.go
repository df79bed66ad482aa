// Package keeper is the cgroup keeper: the process that kills and
// removes a host's cgroup, with every call's cgroup in it, once the host
// is gone, however it went (SIGKILL included).
//
// The host (package shell) starts its own binary again as Name DIR, with
// the read end of a pipe as fd 3 whose write end the host holds until it
// exits. The keeper becomes one from this package's initialiser, not from
// main: Go runs, of the packages whose imports are initialised, the
// first by import path, and this one imports only packages that every
// program initialises first, so a keeper is the Go runtime and little
// else. Started from main, it ran every initialiser of the program it is
// a copy of (gRPC's, protobuf's registries, OpenTelemetry's): 2-4 ms of
// the plugin's first call, and 18 MB resident for the life of sandboxd.
// internal/layers holds it to its imports (initFirst).
//
// Nothing else starts a program as Name: linking the package takes over
// no other start of a program.
package keeper

import (
	"os"
	"syscall"
	"time"
)

// Name is argv[0] of a keeper: Name DIR, the cgroup its host's calls'
// cgroups go in.
const Name = "promptkit-sandbox-keeper"

func init() {
	if len(os.Args) == 2 && os.Args[0] == Name {
		syscall.Exit(keep(os.Args[1]))
	}
}

// keep waits for the end of its host (the end of file on fd 3), then
// kills every process in dir and removes it.
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
	_ = Kill(dir)
	Remove(dir, 5*time.Second)
	return 0
}

// releaseStdio points the keeper's stdio at /dev/null: it outlives its
// host, and must not hold the host's pipes (a caller reading the host's
// output to its end would wait for the keeper too).
func releaseStdio() {
	null, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	for fd := range 3 {
		_ = syscall.Dup3(null, fd, 0)
	}
	_ = syscall.Close(null)
}

// Kill kills every process in the cgroup dir and in the cgroups below
// it (cgroup.kill, Linux 5.14 and later).
func Kill(dir string) error {
	return os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0) // #nosec G703 -- dir is the cgroup the host made and handed the keeper
}

// Remove removes the cgroup dir and those below it once they are empty,
// waiting up to within for the processes in them to go (a kill takes
// effect asynchronously). It reports whether dir is gone.
func Remove(dir string, within time.Duration) bool {
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
		if e.IsDir() && e.Name()[0] != '.' {
			if err := removeTree(dir + "/" + e.Name()); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return syscall.Rmdir(dir)
}
