// Command spawnfloor runs its arguments as a command, with its own
// stdin, stdout and stderr, and exits with the command's status: the
// least a Go program that stands between a hook's caller and the hook
// can do. BenchmarkExecFloor times it, the floor for exec through a
// serve, which is such a program and a second spawn.
package main

import (
	"errors"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Exit(125)
	}
}
