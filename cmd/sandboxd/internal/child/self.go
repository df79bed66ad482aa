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
)

// envName, in a child of sandboxd's own executable, names the function
// it is to run (see Serve).
const envName = "SANDBOXD_CHILD"

// envMemory, in a child of sandboxd's own executable, is the cap on its
// address space, in bytes, that it sets on itself before it reads its
// input. A child that runs as another user (Limits.Credential) is out
// of reach of the parent's prlimit where sandboxd lacks
// CAP_SYS_RESOURCE (a container's root), so it caps itself.
const envMemory = "SANDBOXD_CHILD_MEMORY"

// execWorker is the function name of the trampoline: a child that caps
// itself and then becomes the program its arguments name (Run of
// another program with a credential).
const execWorker = "exec"

// failed is the exit status of a worker whose function returned an
// error, its text on stderr; a crash exits 2 (a Go panic or fatal
// error) or dies of a signal.
const failed = 3

// Func is work done in a child: its input on stdin, its output on
// stdout.
type Func func(input []byte) ([]byte, error)

var funcs = map[string]Func{}

// Register names f for Call; packages call it from init, so that the
// function is known in every executable that links them.
func Register(name string, f Func) {
	if _, dup := funcs[name]; dup {
		panic("child: " + name + " registered twice")
	}
	funcs[name] = f
}

// Serve makes the process the worker its parent started it as, if it
// was started as one: it runs the function, writes its output and exits.
// Any other process returns at once. sandboxd's main, and the TestMain
// of a package whose tests start children, call it first.
func Serve() {
	name, ok := os.LookupEnv(envName)
	if !ok {
		return
	}
	if err := limitSelf(); err != nil {
		fmt.Fprintln(os.Stderr, "memory limit:", err)
		os.Exit(2)
	}
	if name == execWorker {
		os.Exit(become(os.Args[1:]))
	}
	os.Exit(serve(name, os.Stdin, os.Stdout, os.Stderr))
}

// become replaces the process with argv, in the environment it was
// given without the child's own variables; it returns only on failure.
func become(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "child exec: no program")
		return 2
	}
	env := os.Environ()[:0:0]
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != envName && k != envMemory {
			env = append(env, kv)
		}
	}
	// #nosec G702 -- the worker runs the command line sandboxd itself gave it (Serve's execWorker), under the limits set above
	err := syscall.Exec(argv[0], argv, env)
	fmt.Fprintf(os.Stderr, "child exec %s: %v\n", argv[0], err)
	return 127
}

// limitSelf applies envMemory, if set.
func limitSelf() error {
	v, ok := os.LookupEnv(envMemory)
	if !ok {
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", envMemory, v, err)
	}
	return limitMemory(os.Getpid(), n)
}

func serve(name string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := funcs[name]
	if f == nil {
		fmt.Fprintf(stderr, "no child function %q in this executable\n", name)
		return 2
	}
	// The parent is sandboxd: its input is bounded there.
	input, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	output, err := f(input)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return failed
	}
	if _, err := stdout.Write(output); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return 0
}

// ErrNoExecutable is Call's error when sandboxd's executable is unknown.
var ErrNoExecutable = errors.New("no executable to start a child of")

// Failure is the error a worker's function returned, as its text.
type Failure struct{ Msg string }

func (e *Failure) Error() string { return e.Msg }

// Call runs the function registered as name in a child of self
// (sandboxd's own executable, or a helper whose main calls Serve), with
// input on its stdin, under lim (see
// Run), and returns its output. The function's own error comes back as
// a *Failure.
func Call(ctx context.Context, self, name string, lim Limits, input []byte) ([]byte, error) {
	if self == "" {
		return nil, ErrNoExecutable
	}
	out, exit, err := run(ctx, Command{Path: self, Env: []string{envName + "=" + name}, Stdin: input, self: true}, lim)
	switch {
	case err != nil:
		return nil, err
	case exit != nil && exit.Code == failed && exit.Signal == "":
		return nil, &Failure{Msg: out.Stderr}
	case exit != nil && out.Stderr != "":
		return nil, fmt.Errorf("%w:\n%s", exit, out.Stderr)
	case exit != nil:
		return nil, exit
	}
	return out.Stdout, nil
}

// Executable is how a child names this executable, for Call; "" if it
// cannot be found, and then Call refuses. It is /proc/self/exe where
// that works: the running binary itself, whatever now lies at the path
// it was started from, and reachable by a child that runs as another
// user (--run-as) through directories that user may not search (a
// magic link skips the walk).
func Executable() string {
	if _, err := os.Stat(selfExe); err == nil {
		return selfExe
	}
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// selfExe names the running binary.
const selfExe = "/proc/self/exe"
