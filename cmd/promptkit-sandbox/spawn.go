package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/shared/bounded"
	"github.com/altairalabs/promptkit-sandbox/shared/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func (e *cliEnv) spawn(args []string) int {
	var common commonFlags
	fs := newFlagSet("spawn", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig YAML file declaring the sandbox (not needed for --sandbox direct)")
	name := fs.String("sandbox", direct.ModeName, "sandbox name under spec.sandboxes, or direct")
	timeout := fs.Duration("timeout", 0, "kill the command after this long (default: the sandbox's own, 10s for direct)")
	var env stringList
	fs.Var(&env, "env", "KEY=value to set, or KEY to forward from this environment (repeatable)")
	maxInput := maxInputFlag(fs)
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		e.errorf("spawn: no command given (usage: promptkit-sandbox spawn --sandbox NAME -- CMD [ARG...])")
		return exitUsage
	}
	if *timeout < 0 {
		e.errorf("spawn: --timeout must not be negative")
		return exitUsage
	}
	rt, _, code := e.openRuntime(&common, *cfgPath)
	if code != exitOK {
		return code
	}
	defer func() { _ = rt.Close(context.Background()) }()
	sb, ok := rt.Sandbox(*name)
	if !ok {
		e.errorf("spawn: no sandbox named %q in %s", *name, describeConfig(*cfgPath))
		return exitUsage
	}

	stdin, err := e.spawnStdin(int64(*maxInput))
	if err != nil {
		e.errorf("spawn: %v", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	resp, err := sb.Spawn(ctx, sandbox.Request{
		Command: fs.Arg(0),
		Args:    fs.Args()[1:],
		Env:     env,
		Stdin:   stdin,
		Timeout: *timeout,
	})
	_, _ = e.stdout.Write(resp.Stdout)
	_, _ = e.stderr.Write(resp.Stderr)
	if resp.StdoutTruncated {
		e.errorf("spawn: stdout was truncated at the sandbox's output limit")
	}
	if resp.StderrTruncated {
		e.errorf("spawn: stderr was truncated at the sandbox's output limit")
	}
	return e.spawnExitCode(err)
}

// spawnExitCode maps a Spawn error onto the conventions of timeout(1) and
// env(1): the command's own status when it ran, 124 when it timed out, 125
// when the sandbox could not run it, 130 when interrupted.
func (e *cliEnv) spawnExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var xe *sandbox.ExitError
	switch {
	case errors.As(err, &xe):
		return xe.Code
	case errors.Is(err, sandbox.ErrTimeout):
		e.errorf("spawn: %v", err)
		return exitTimeout
	case errors.Is(err, sandbox.ErrCanceled):
		e.errorf("spawn: %v", err)
		return 130
	}
	e.errorf("spawn: %v", err)
	return exitSandbox
}

// spawnStdin reads what is piped to us; a terminal is not read, so an
// interactive `spawn` does not sit waiting for EOF.
func (e *cliEnv) spawnStdin(limit int64) ([]byte, error) {
	if f, ok := e.stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, nil
		}
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
