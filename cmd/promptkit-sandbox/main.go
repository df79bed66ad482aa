// Command promptkit-sandbox is the host CLI for PromptKit exec hooks: run a
// hook the way PromptKit would, spawn any command through a sandbox, be the
// hook command of a PromptKit program that cannot be recompiled (exec,
// served by a long-lived serve), and validate a RuntimeConfig.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitDenied  = 1 // hook run: the hook denied
	exitUsage   = 2 // bad flags, bad config, bad input
	exitTimeout = 124
	exitSandbox = 125 // the sandbox itself failed (could not start, transport)
)

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	// The calls this CLI runs itself (spawn, direct sandboxes) are
	// contained by starts of this binary.
	supervisor.Init()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code, so tests can
// drive every command in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	env := &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "hook":
		return env.hook(args[1:])
	case "spawn":
		return env.spawn(args[1:])
	case "exec":
		return env.exec(args[1:])
	case "serve":
		return env.serve(args[1:])
	case "validate":
		return env.validate(args[1:])
	case "plugins":
		return env.plugins(args[1:])
	case "codegen":
		return env.codegen(args[1:])
	case "version", "--version":
		return env.version(args[1:])
	case "help", "-h", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "promptkit-sandbox: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: promptkit-sandbox <command> [flags]

Commands:
  hook run   --config FILE --hook NAME --phase PHASE [--input FILE|-]
             Run one exec hook on a payload as PromptKit would and print its
             decision as JSON. Exit 0 allowed, 1 denied, 2 usage/config error.
  spawn      [--config FILE] --sandbox NAME [--timeout D] [--env K=V]... -- CMD [ARG...]
             Run a command through a sandbox; exit with its exit code
             (124 timeout, 125 sandbox failure, 2 usage/config error).
  exec       --config FILE --sandbox NAME [--socket PATH] [--timeout D] [--env K=V|K]... -- CMD [ARG...]
             spawn for a hook command: run CMD in a sandbox of the config, our
             stdin, stdout, stderr and exit status its own (124 timeout, 125
             sandbox failure, 2 usage/config error, 130 interrupted). Runs the
             call through a serve of the same config when one listens on the
             socket (--socket, else $PROMPTKIT_SANDBOX_SOCKET, else
             $XDG_RUNTIME_DIR/promptkit-sandbox/serve.sock or
             /tmp/promptkit-sandbox-UID/serve.sock), in this process otherwise.
  serve      --config FILE [--socket PATH] [--metrics-addr ADDR]
             Open the config's sandboxes once and run exec calls in them, so
             warm pools and residents last between calls, until SIGINT or
             SIGTERM. Only this user's processes may connect. --metrics-addr
             serves Prometheus metrics at /metrics (a bare port: 127.0.0.1).
  validate   --config FILE
             Check a RuntimeConfig; exit 0 with a summary or 2 with every problem.
  plugins list [--config FILE] [--json]
             Show every plugin found: name, version, path, modes, SHA-256,
             and why a candidate was refused.
  plugins lock --config FILE
             Record the SHA-256 of the plugins the config selects in
             promptkit-sandbox.lock beside it; from then on a plugin whose
             hash differs is refused before it runs.
  codegen up --config FILE --sandbox NAME [--workspace DIR] [--json] [--socket PATH] [--foreground]
             Provision a codegen sandbox (a provider mode such as docker_codegen)
             and print its MCP endpoint, token and a .mcp.json. With a serve of
             the config running on the socket, the serve holds the sandbox and
             up returns; otherwise up holds it until Ctrl-C, which releases it.
  codegen ls [--socket PATH] [--volumes] [--json]
             List the sandboxes the serve holds (no tokens).
  codegen down ID [--socket PATH] [--purge]
             Release a sandbox the serve holds: its container and private
             directory go; a workspace it was given stays, and so does its
             build cache volume unless --purge.
  codegen pause ID [--socket PATH]
  codegen resume ID [--socket PATH]
             Pause a sandbox the serve holds (its processes frozen, its files,
             memory and background shells kept; calls to it are refused with
             why) or resume it. docker_codegen only.
  codegen fork ID [--count N] [--json] [--socket PATH]
             Provision N new sandboxes (held by the serve) whose workspaces
             start as copies of ID's, independent afterwards. docker_codegen only.
  codegen images [--json]
             List the local engine's sandboxd images and the languages each
             serves (docker_codegen picks among them by the workspace's
             language markers unless the entry sets image or language).
  version    Print the version.

Every command accepts --log-level (trace, debug, info, warn, error; default
info), --plugin-dir DIR (repeatable; replaces the default plugin search
path, which starts with $PROMPTKIT_PLUGIN_PATH) and --plugin-start-timeout
(default 10s).
`)
}

// cliEnv carries the process's streams to the commands: this process's,
// or, for an exec call a serve runs (relayserve.go), exec's.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// dir and lookupEnv are exec's working directory and environment
	// when they are not this process's; empty and nil otherwise.
	dir       string
	lookupEnv func(string) (string, bool)
}

// getenv is the caller's environment variable k.
func (e *cliEnv) getenv(k string) string {
	if e.lookupEnv == nil {
		return os.Getenv(k)
	}
	v, _ := e.lookupEnv(k)
	return v
}

// path is p as the caller meant it: relative to its working directory.
func (e *cliEnv) path(p string) string {
	if e.dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

func (e *cliEnv) errorf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "promptkit-sandbox: "+format+"\n", args...)
}
