package shell

import (
	"io"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Defaults applied when the corresponding Options field is zero.
const (
	// DefaultKillGrace is how long a process group has between SIGTERM
	// and SIGKILL: enough to flush a log line, too short to stall a hook
	// pipeline.
	DefaultKillGrace = 500 * time.Millisecond
	// DefaultOrphanWait bounds how long Wait keeps reading stdout and
	// stderr after the process has exited, for descendants that escaped
	// the process group and still hold the pipes.
	DefaultOrphanWait = 250 * time.Millisecond
)

// Options configure how processes are run. The zero value is usable: host
// environment, current directory, sandbox.DefaultTimeout, DefaultKillGrace
// and sandbox.DefaultOutputLimit.
type Options struct {
	// Dir is the working directory; empty means the host's current one.
	Dir string
	// Timeout applies when Request.Timeout is zero or negative. Zero means
	// sandbox.DefaultTimeout; negative means no timeout, so only the
	// context or Process.Stop end the process (background shells).
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL. Zero means
	// DefaultKillGrace; negative means SIGKILL straight away.
	KillGrace time.Duration
	// OutputLimit caps stdout and stderr, each, in bytes. Zero or negative
	// means sandbox.DefaultOutputLimit.
	OutputLimit int
	// CleanEnv starts the process from an empty environment instead of
	// the host's; Request.Env still applies, bare keys included.
	CleanEnv bool
	// OrphanWait is how long to keep reading output after the process has
	// exited and its group has been killed. Zero means DefaultOrphanWait.
	OrphanWait time.Duration
	// StdoutSink and StderrSink, when set, receive the stream's bytes (up
	// to OutputLimit) as they arrive instead of the Response holding
	// them; the truncation flags still report what was dropped. Each is
	// written from one goroutine at a time, and never after Wait returns.
	StdoutSink io.Writer
	StderrSink io.Writer
	// StdinReader, when set, is the process's stdin instead of
	// Request.Stdin, copied as it comes: a client whose input is written
	// after it starts (a docker or kubectl exec that waits for its call).
	// Wait does not wait for it to end; the copy stops at the first write
	// after the process is gone.
	StdinReader io.Reader
	// Uncontained holds the process by its process group alone (see
	// ContainGroup): for a trusted client (docker, kubectl) that leaves
	// nothing running, where a cgroup or a supervisor would only cost.
	Uncontained bool
	// Credential, when set, is the user and groups the process runs as
	// (the host must be root). A supervisor keeps the host's: the
	// process can then neither signal it nor read it.
	Credential *syscall.Credential
	// Isolated starts the process in a Landlock domain of its own, where
	// the host offers Landlock (IsolationAvailable): processes of other
	// domains, other isolated calls among them, cannot read its
	// environment, memory or open files through /proc, nor ptrace it,
	// even as the same user. Where Landlock is missing it has no effect.
	Isolated bool
}

func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = sandbox.DefaultTimeout
	}
	if o.KillGrace == 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = sandbox.DefaultOutputLimit
	}
	if o.OrphanWait <= 0 {
		o.OrphanWait = DefaultOrphanWait
	}
	return o
}

// timeoutFor is the limit a request runs under; zero means none.
func (o Options) timeoutFor(req sandbox.Request) time.Duration {
	if req.Timeout > 0 {
		return req.Timeout
	}
	return max(o.Timeout, 0)
}

func (o Options) output(sink io.Writer) *Output {
	if sink != nil {
		return NewStreamingOutput(o.OutputLimit, sink)
	}
	return NewOutput(o.OutputLimit)
}
