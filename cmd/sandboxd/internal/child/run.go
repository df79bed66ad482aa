package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Limits bound one child.
type Limits struct {
	// Timeout ends the child (SIGKILL to its process group).
	Timeout time.Duration
	// Memory caps its address space, in bytes.
	Memory uint64
	// Output caps its stdout, in bytes.
	Output int
	// Credential, when set, is the user the child runs as (sandboxd's
	// --run-as): not a bound on its resources, but on its rights, and it
	// travels with the limits to every child. A child works on the
	// agent's input, so it gets the agent's rights, never root's.
	Credential *syscall.Credential
}

// The limits a child ran into; Run wraps them.
var (
	ErrTimeout = errors.New("time limit reached")
	ErrMemory  = errors.New("memory limit reached")
	ErrOutput  = errors.New("output limit reached")
)

// maxStderr caps the stderr a caller gets back: a renderer's warnings,
// a worker's error.
const maxStderr = 16 << 10

// Command is a program to run as a child.
type Command struct {
	Path string
	Args []string
	// Env is its whole environment, but for HOME, XDG_CACHE_HOME and
	// LANG, which Run sets.
	Env   []string
	Stdin []byte
	// self: Path is sandboxd's own executable, whose Serve applies
	// envMemory.
	self bool
}

// Output is what a child wrote.
type Output struct {
	Stdout []byte
	// Stderr is trimmed, valid UTF-8 and capped.
	Stderr string
}

// Run runs cmd in an empty private directory (also its HOME: relative
// names resolve there, never in a workspace), killed with its process
// group at lim.Timeout or when ctx is done, its address space capped
// before it reads its stdin. A limit reached is an error wrapping
// ErrTimeout, ErrMemory or ErrOutput; another non-zero exit is a
// *sandbox.ExitError with the stderr appended.
func Run(ctx context.Context, cmd Command, lim Limits) (Output, error) {
	out, exit, err := run(ctx, cmd, lim)
	if err == nil && exit != nil {
		err = exit
		if out.Stderr != "" {
			err = fmt.Errorf("%w:\n%s", exit, out.Stderr)
		}
	}
	return out, err
}

// run is Run with a non-zero exit apart from the other errors, for
// Call to tell its worker's own error from a crash.
func run(ctx context.Context, cmd Command, lim Limits) (Output, *sandbox.ExitError, error) {
	dir, err := os.MkdirTemp("", "sandboxd-child-")
	if err != nil {
		return Output{}, nil, fmt.Errorf("private directory: %w", err)
	}
	defer os.RemoveAll(dir)
	if c := lim.Credential; c != nil {
		if err := os.Chown(dir, int(c.Uid), int(c.Gid)); err != nil {
			return Output{}, nil, fmt.Errorf("private directory: %w", err)
		}
	}
	env := append(cmd.Env[:len(cmd.Env):len(cmd.Env)], "HOME="+dir, "XDG_CACHE_HOME="+dir, "LANG=C.UTF-8")
	path, args := cmd.Path, cmd.Args
	// A child of another user caps itself (see envMemory); another
	// program does so through a start of this executable that then
	// becomes it.
	capsItself := lim.Credential != nil && lim.Memory > 0
	if capsItself {
		env = append(env, envMemory+"="+strconv.FormatUint(lim.Memory, 10))
		if !cmd.self {
			self := Executable()
			if self == "" {
				return Output{}, nil, ErrNoExecutable
			}
			path, args = self, append([]string{cmd.Path}, cmd.Args...)
			env = append(env, envName+"="+execWorker)
		}
	}
	stdin, feed := io.Pipe()
	defer stdin.Close()
	p, err := shell.Start(ctx, sandbox.Request{Command: path, Args: args, Env: env}, shell.Options{
		Dir:         dir,
		Timeout:     lim.Timeout,
		KillGrace:   -1,
		OutputLimit: lim.Output,
		CleanEnv:    true,
		StdinReader: stdin,
		Uncontained: true,
		Credential:  lim.Credential,
		Isolated:    true,
	})
	if err != nil {
		_ = feed.Close()
		return Output{}, nil, err
	}
	// The memory limit is set before the process has its input: until
	// then it has allocated nothing the input could inflate (a PNG at a
	// huge dpi would otherwise claim gigabytes for its surface).
	if !capsItself {
		if err := limitMemory(p.Pid(), lim.Memory); err != nil {
			_ = feed.Close()
			p.Stop()
			_, _ = p.Wait()
			return Output{}, nil, fmt.Errorf("memory limit: %w", err)
		}
	}
	go func() {
		feed.CloseWithError(writeAll(feed, cmd.Stdin))
	}()
	resp, err := p.Wait()
	out := Output{Stdout: resp.Stdout, Stderr: stderrOf(resp.Stderr)}
	var exit *sandbox.ExitError
	switch {
	case sandbox.KindOf(err) == sandbox.KindTimeout || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return out, nil, fmt.Errorf("%w (%s)", ErrTimeout, lim.Timeout)
	case ctx.Err() != nil:
		return out, nil, fmt.Errorf("stopped: %w", ctx.Err())
	case resp.StdoutTruncated:
		return out, nil, fmt.Errorf("%w (%d bytes)", ErrOutput, lim.Output)
	case err != nil && outOfMemory(out.Stderr):
		return out, nil, fmt.Errorf("%w (%d MiB)", ErrMemory, lim.Memory>>20)
	case errors.As(err, &exit):
		return out, exit, nil
	case err != nil:
		return out, nil, err
	}
	return out, nil, nil
}

// outOfMemory reports whether stderr says its process ran out of
// memory: Go's runtime and Graphviz say "out of memory", libc's
// strerror "Cannot allocate memory", the race detector's runtime
// "failed to allocate".
func outOfMemory(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") || strings.Contains(s, "failed to allocate")
}

func writeAll(w io.Writer, data []byte) error {
	_, err := w.Write(data)
	return err
}

func stderrOf(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	if len(s) > maxStderr {
		s = s[:maxStderr] + "\n[stderr truncated]"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
