package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// envName, in a child of sandboxd's own executable, names the function
// it is to run (see Serve).
const envName = "SANDBOXD_CHILD"

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
	os.Exit(serve(name, os.Stdin, os.Stdout, os.Stderr))
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
// (sandboxd's own executable), with input on its stdin, under lim (see
// Run), and returns its output. The function's own error comes back as
// a *Failure.
func Call(ctx context.Context, self, name string, lim Limits, input []byte) ([]byte, error) {
	if self == "" {
		return nil, ErrNoExecutable
	}
	out, exit, err := run(ctx, Command{Path: self, Env: []string{envName + "=" + name}, Stdin: input}, lim)
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

// Executable is the path of this executable, for Call; "" if it cannot
// be found, and then Call refuses.
func Executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}
