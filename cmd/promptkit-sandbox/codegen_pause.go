package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// codegenPause is codegen pause ID and codegen resume ID: they ask the
// serve holding the sandbox, as down does.
func (e *cliEnv) codegenPause(args []string, pause bool) int {
	cmd := map[bool]string{true: "codegen pause", false: "codegen resume"}[pause]
	var common commonFlags
	fs := newFlagSet(cmd, e.stderr, &common)
	socket := fs.String("socket", "", "the serve holding the sandbox (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	ids, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(ids) != 1 {
		e.errorf("usage: promptkit-sandbox %s ID [--socket PATH]", cmd)
		return exitUsage
	}
	id := ids[0]
	ctx, stop := interruptible()
	defer stop()
	client, done, path, code := e.serveClient(ctx, cmd, *socket)
	if code != exitOK {
		return code
	}
	defer done()
	set, did := client.Resume, "resumed"
	if pause {
		set, did = client.Pause, "paused"
	}
	if err := set(ctx, id); err != nil {
		e.errorf("%s: serve on %s: %v", cmd, path, err)
		if errors.Is(err, plugin.ErrNotProvisioned) || errors.Is(err, plugin.ErrCannotPause) {
			return exitUsage
		}
		return exitSandbox
	}
	fmt.Fprintf(e.stdout, "%s %s\n", did, id)
	return exitOK
}

// codegenFork is codegen fork ID [--count N]: new sandboxes, held by the
// same serve, whose workspaces start as copies of ID's.
func (e *cliEnv) codegenFork(args []string) int {
	var common commonFlags
	fs := newFlagSet("codegen fork", e.stderr, &common)
	socket := fs.String("socket", "", "the serve holding the sandbox (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	count := fs.Int("count", 1, "how many forks")
	asJSON := fs.Bool("json", false, "print one JSON object a line, a fork each, instead of text")
	ids, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(ids) != 1 || *count < 1 {
		e.errorf("usage: promptkit-sandbox codegen fork ID [--count N] [--json] [--socket PATH]")
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	client, done, path, code := e.serveClient(ctx, "codegen fork", *socket)
	if code != exitOK {
		return code
	}
	defer done()
	forks, err := client.Fork(ctx, ids[0], *count)
	if err != nil {
		e.errorf("codegen fork: serve on %s: %v", path, err)
		if errors.Is(err, plugin.ErrNotProvisioned) || errors.Is(err, plugin.ErrCannotFork) {
			return exitUsage
		}
		return provisionExitCode(err)
	}
	for _, f := range forks {
		if err := e.printUp(f, "serve", path, *asJSON); err != nil {
			e.errorf("codegen fork: %v", err)
			return exitSandbox
		}
	}
	return exitOK
}
