// Package remoteproc runs a command in a remote shell (a container of a
// pod, reached through an exec stream that cannot signal it) so that the
// caller can still find it, give it an environment, tell when it has
// exited, and kill it with everything it started.
//
// The command runs under a small POSIX sh wrapper (Argv). The wrapper
// reports its PID as the first line of stderr, reads the call's
// environment and a go line from stdin (Preamble writes both, so nothing
// secret goes on a command line, where the API server's audit log and
// the pod's process list would show it), checks that the command exists,
// runs it, and reports its exit status as the last line of stderr.
// Filter takes those control lines out of the output. KillArgv is the
// command a second exec runs to kill the call's process tree by that PID.
//
// Execs start through a gate of the process's (StartsInFlight per
// target), so a burst of calls waits here, where a cancelled one costs
// nothing, not in the container runtime, which starts one exec at a time
// and runs each to its end.
//
// The target needs /bin/sh with the kill builtin and a mounted /proc;
// CheckArgv is the command that proves it.
package remoteproc
