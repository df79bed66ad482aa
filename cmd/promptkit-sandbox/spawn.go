package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// exitInterrupted is the status of a call cancelled by SIGINT or SIGTERM,
// as a shell reports a command ended by Ctrl-C.
const exitInterrupted = 130

// spawnFlags are the flags spawn and exec share, which make the request:
// the sandbox, the command's timeout and environment, the stdin limit.
type spawnFlags struct {
	cmd      string // the command's name, for messages
	common   commonFlags
	cfgPath  *string
	name     *string
	timeout  *time.Duration
	env      stringList
	maxInput *sizeFlag
	argv     []string // the command and its arguments, after --
}

func newSpawnFlags(cmd string, e *cliEnv) (*flag.FlagSet, *spawnFlags) {
	f := &spawnFlags{cmd: cmd}
	fs := newFlagSet(cmd, e.stderr, &f.common)
	f.cfgPath = fs.String("config", "", "RuntimeConfig YAML file declaring the sandbox (not needed for --sandbox direct)")
	f.name = fs.String("sandbox", direct.ModeName, "sandbox name under spec.sandboxes, or direct")
	f.timeout = fs.Duration("timeout", 0, "kill the command after this long (default: the sandbox's own, 10s for direct)")
	fs.Var(&f.env, "env", "KEY=value to set, or KEY to forward from this environment (repeatable)")
	f.maxInput = maxInputFlag(fs)
	return fs, f
}

// parse parses args and checks what every spawning command needs; on
// false, code is the exit code.
func (f *spawnFlags) parse(e *cliEnv, fs *flag.FlagSet, args []string) (ok bool, code int) {
	if ok, code := parseFlags(fs, args); !ok {
		return false, code
	}
	if fs.NArg() == 0 {
		e.errorf("%s: no command given (usage: promptkit-sandbox %s --sandbox NAME -- CMD [ARG...])", f.cmd, f.cmd)
		return false, exitUsage
	}
	if *f.timeout < 0 {
		e.errorf("%s: --timeout must not be negative", f.cmd)
		return false, exitUsage
	}
	f.argv = fs.Args()
	return true, exitOK
}

func (e *cliEnv) spawn(args []string) int {
	fs, f := newSpawnFlags("spawn", e)
	if ok, code := f.parse(e, fs, args); !ok {
		return code
	}
	ctx, stop := interruptible()
	defer stop()
	return e.spawnCold(ctx, f, *f.cfgPath)
}

// interruptible is a context SIGINT and SIGTERM cancel: a call under it
// ends with what it started killed, where it runs, and exits 130.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// spawnCold loads the config at cfgPath in this process, starting the
// plugins its sandboxes need, and runs the command through the sandbox
// f names.
func (e *cliEnv) spawnCold(ctx context.Context, f *spawnFlags, cfgPath string) int {
	rt, _, code := e.openRuntime(&f.common, cfgPath)
	if code != exitOK {
		return code
	}
	defer func() { _ = rt.Close(context.Background()) }()
	sb, ok := rt.Sandbox(*f.name)
	if !ok {
		e.errorf("%s: no sandbox named %q in %s", f.cmd, *f.name, describeConfig(cfgPath))
		return exitUsage
	}
	return e.spawnThrough(ctx, f, sb)
}

// spawnThrough reads our stdin, runs the command in sb, writes its output
// on ours (as it comes, when sb streams: a long hook's progress shows),
// and returns the exit code.
func (e *cliEnv) spawnThrough(ctx context.Context, f *spawnFlags, sb sandbox.Sandbox) int {
	return e.spawnExitCode(f.cmd, e.spawnCall(ctx, f, sb))
}

// spawnCall is spawnThrough's call, its error that of Spawn.
func (e *cliEnv) spawnCall(ctx context.Context, f *spawnFlags, sb sandbox.Sandbox) error {
	stdin, err := e.spawnStdin(int64(*f.maxInput))
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted while it was still coming (a relayed exec).
			return sandbox.ContextError(ctx, "read stdin", 0)
		}
		return &usageError{fmt.Errorf("%s: %w", f.cmd, err)}
	}
	req := sandbox.Request{
		Command: f.argv[0],
		Args:    f.argv[1:],
		Env:     f.env,
		Stdin:   stdin,
		Timeout: *f.timeout,
	}
	if e.lookupEnv != nil {
		// A bare KEY forwards the caller's KEY: resolved here, where the
		// caller's environment is, not by the sandbox from the serve's.
		req.Env = shell.MergeEnv(nil, f.env, e.lookupEnv)
	}
	// The call's deadline is set here, where it enters; the sandbox's
	// report of a timeout is awaited sandbox.Grace past it.
	ctx, cancel := sandbox.Enter(ctx, req.Timeout)
	defer cancel()
	// A backend may write both streams at once; ours may be one writer.
	var mu sync.Mutex
	resp, err := sandbox.SpawnTo(ctx, sb, req, lockedWriter{&mu, e.stdout}, lockedWriter{&mu, e.stderr})
	if resp.StdoutTruncated {
		e.errorf("%s: stdout was truncated at the sandbox's output limit", f.cmd)
	}
	if resp.StderrTruncated {
		e.errorf("%s: stderr was truncated at the sandbox's output limit", f.cmd)
	}
	return err
}

// usageError is a call refused for what it was given (stdin over the
// limit): exit 2, its message as it is.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// spawnExitCode maps a Spawn error onto the conventions of timeout(1) and
// env(1): the command's own status when it ran, 124 when it timed out, 125
// when the sandbox could not run it, 130 when interrupted.
func (e *cliEnv) spawnExitCode(cmd string, err error) int {
	if err == nil {
		return exitOK
	}
	var xe *sandbox.ExitError
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		e.errorf("%v", ue)
		return exitUsage
	case errors.As(err, &xe):
		return xe.Code
	case errors.Is(err, sandbox.ErrTimeout):
		e.errorf("%s: %v", cmd, err)
		return exitTimeout
	case errors.Is(err, sandbox.ErrCanceled):
		e.errorf("%s: %v", cmd, err)
		return exitInterrupted
	}
	e.errorf("%s: %v", cmd, err)
	return exitSandbox
}

// spawnStdin reads what is piped to us; a terminal is not read, so an
// interactive `spawn` does not sit waiting for EOF. Only a terminal: any
// other character device (/dev/zero, /dev/urandom, /dev/null) is read
// like a pipe, to the limit, so endless input is refused, not dropped.
func (e *cliEnv) spawnStdin(limit int64) ([]byte, error) {
	if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
		return nil, nil
	}
	data, err := bounded.Read(e.stdin, limit, "stdin", maxInputHint)
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	return data, nil
}

func describeConfig(path string) string {
	if path == "" {
		return "the built-in sandboxes (pass --config to use a RuntimeConfig's)"
	}
	return path
}

// isTerminal reports whether f is a terminal (execrelay.IsTerminal),
// without taking f out of non-blocking mode as Fd would.
func isTerminal(f *os.File) bool {
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	terminal := false
	if err := raw.Control(func(fd uintptr) { terminal = execrelay.IsTerminal(fd) }); err != nil {
		return false
	}
	return terminal
}
