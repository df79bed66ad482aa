// Package sandbox is the contract every backend implements: where an exec
// hook's process runs is the sandbox's business, what goes in and comes out
// is fixed here.
//
// The shape mirrors PromptKit's runtime/hooks/sandbox package so an adapter
// between the two is a few lines: a Sandbox spawns one process per call,
// pipes Request.Stdin to it and returns its stdout and stderr. Failures are
// typed (see errors.go) so callers can branch on a timeout, a non-zero exit,
// a process that could not be started, a broken transport or a cancelled
// context, whichever backend produced them and whether or not the call
// crossed a plugin boundary.
package sandbox

import (
	"context"
	"io"
	"time"
)

// Sandbox launches a process and returns its output.
type Sandbox interface {
	// Name identifies the sandbox in logs and errors: the name it was
	// declared under in spec.sandboxes, or the mode name for a default.
	Name() string

	// Spawn runs req.Command with req.Args, feeds it req.Stdin and
	// collects stdout and stderr separately. It returns when the process
	// has exited and everything it started is gone, when req.Timeout
	// expires, or when ctx is done.
	//
	// The returned error is nil only when the process exited with status
	// zero. Otherwise it is one of the typed errors of this package and
	// Response.Err holds the same value, so callers that only look at the
	// Response (as PromptKit's exec hooks do) see it too. Whatever output
	// was captured before the failure is returned either way.
	Spawn(ctx context.Context, req Request) (Response, error)
}

// Request describes one process to run.
type Request struct {
	// Command is the program to run. Local backends resolve it as a path
	// or through PATH; remote backends pass it verbatim.
	Command string
	// Args are the positional arguments after Command.
	Args []string
	// Env adds to the sandbox's baseline environment. An entry "KEY=value"
	// is set verbatim; a bare "KEY" forwards the host's value of KEY when
	// the host has it, and is dropped otherwise (PromptKit's semantics).
	Env []string
	// Stdin is written to the process's standard input, which is then
	// closed. A sandbox does not retain it after Spawn returns.
	Stdin []byte
	// Timeout bounds the call. Zero (or negative) means the sandbox's own
	// default.
	Timeout time.Duration
}

// Response is what a Spawn produced.
type Response struct {
	// Stdout and Stderr are the bytes the process wrote, each up to the
	// sandbox's output cap.
	Stdout []byte
	Stderr []byte
	// StdoutTruncated and StderrTruncated report that the process wrote
	// more than the cap and the excess was discarded.
	StdoutTruncated bool
	StderrTruncated bool
	// Err repeats the error Spawn returned (nil on success).
	Err error
}

// Truncated reports whether either stream was cut at the output cap.
func (r Response) Truncated() bool { return r.StdoutTruncated || r.StderrTruncated }

// Closer is implemented by sandboxes that hold resources (a client, a
// connection, a pool of containers). Whoever opened the sandbox calls
// Close when done with it.
type Closer interface {
	Close() error
}

// Streamer is implemented by sandboxes that can hand a process's output
// over while it runs instead of returning it whole. SpawnStreaming is
// Spawn with stdout and stderr written to the given writers (up to the
// sandbox's output cap, each from one goroutine at a time, never after it
// returns); the Response carries no output, only the truncation flags and
// the error. A plugin uses it to send output while it is produced.
type Streamer interface {
	SpawnStreaming(ctx context.Context, req Request, stdout, stderr io.Writer) (Response, error)
}

// EnvForwarder is implemented by sandboxes whose own configuration sets
// variables in every process they run, before Request.Env (the env key
// of docker_run, docker_exec and kubectl_exec). ForwardedEnv returns
// those entries, "KEY=value", or a bare "KEY" forwarding the caller's
// value as in Request.Env, so that whoever quotes a process's output can
// redact their values (see shared/scrub) without reading the sandbox's
// configuration, which is the backend's own business.
type EnvForwarder interface {
	ForwardedEnv() []string
}

// Factory builds a Sandbox named name from its mode-specific configuration
// (the keys of a spec.sandboxes entry other than mode). It rejects
// configuration it does not understand with an error naming the key.
//
// ctx bounds the opening: what a factory starts or checks (a container, a
// pod looked up, a shell tried) stops when ctx ends, and the factory then
// returns an error and holds nothing. Its deadline is the entry's
// open_timeout; a factory given a ctx without one bounds itself with
// DefaultOpenTimeout (see OpenContext).
type Factory func(ctx context.Context, name string, cfg map[string]any) (Sandbox, error)

// DefaultTimeout is the timeout a backend applies when Request.Timeout is
// zero and its own configuration sets none.
const DefaultTimeout = 10 * time.Second

// DefaultOpenTimeout bounds opening a sandbox: starting what serves it
// and the checks a backend makes of what it runs on (an image inspected,
// a pod looked up, a shell tried, a resident installed). A RuntimeConfig
// entry's open_timeout replaces it.
const DefaultOpenTimeout = 30 * time.Second

// OpenContext is the context a factory opens under: ctx itself when it
// has a deadline (the caller's open_timeout), else ctx bounded by
// DefaultOpenTimeout, so that no opening waits forever.
func OpenContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultOpenTimeout)
}

// DefaultOutputLimit caps each of stdout and stderr when a backend's
// configuration sets no other limit.
const DefaultOutputLimit = 16 << 20
