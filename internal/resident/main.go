package resident

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Flag is the one argument that makes a backend's plugin binary run as
// the resident instead of serving the plugin protocol.
const Flag = "--promptkit-sandbox-resident"

// Invoked reports whether args (os.Args) ask for the resident.
func Invoked(args []string) bool { return len(args) == 2 && args[1] == Flag }

// Main runs the resident on the process's stdin and stdout and returns
// its exit code. A plugin's main calls it first thing when Invoked.
func Main() int {
	// Nobody else running as this user may read our descriptors or trace
	// us: the calls' frames are ours alone.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "resident: set non-dumpable:", err)
		return 1
	}
	// Whatever a call leaves behind by leaving its parent (a double
	// fork) becomes ours, not the container init's: the call's sweep
	// finds it there (see CallEnv).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "resident: become a child subreaper:", err)
		return 1
	}
	// A broken stdout is an error to handle, not a signal to die of. A
	// handler, unlike ignoring, is reset in the processes we start.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if err := Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
