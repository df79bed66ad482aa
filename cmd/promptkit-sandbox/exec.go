package main

import (
	"errors"
	"flag"
	"os"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
)

// exec is spawn for PromptKit programs that cannot be recompiled: their
// direct sandbox runs it as the hook's command. It runs the command in a
// sandbox of the config, through a serve of that config when one is
// listening (its warm pools and residents outlive the call), in this
// process otherwise. In the binary, a call a serve takes never gets
// here: package execrelay runs it before main (see its doc); what it
// found when no serve took the call is execrelay.Tried.
func (e *cliEnv) exec(args []string) int {
	fs, f, socket := newExecFlags(e)
	if ok, code := f.parse(e, fs, args); !ok {
		return code
	}
	cfg, code := e.execConfig(f)
	if code != exitOK {
		return code
	}
	path, explicit := execrelay.Socket(*socket, os.Getenv)
	tried := execrelay.Tried
	if tried == nil || tried.Socket != path {
		tried = e.relay(path, explicit, args)
	}
	if tried.Result.Handled {
		return tried.Result.Code
	}
	log, err := f.common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	res := tried.Result
	switch {
	case !explicit:
		// Nothing there, a stale socket, one we will not talk to (a
		// serve of another user), or a serve that does not answer: the
		// default socket is only a guess, and a cold call sends nothing
		// to it.
		log.Debug("no usable serve on the default socket: running cold", "socket", path, "reason", res.Err)
	case res.Stalled():
		e.errorf("exec: serve on %s: did not answer within %s (stopped or overloaded?)", path, execrelay.AnswerTimeout)
		return exitSandbox
	case errors.Is(res.Err, execrelay.ErrNoServe):
		e.errorf("exec: %v on %s (start one with: promptkit-sandbox serve --config %s --socket %s)", res.Err, path, cfg, path)
		return exitSandbox
	default:
		e.errorf("exec: serve on %s: %v", path, res.Err)
		return exitSandbox
	}
	// After a serve that did not answer, --timeout counts from exec's
	// start: what the wait took is not the call's again (PromptKit's own
	// timeout is counting too).
	if res.Stalled() && *f.timeout > 0 {
		left := *f.timeout - time.Since(tried.Start)
		if left <= 0 {
			e.errorf("exec: timed out after %s: the wait for the serve on %s took it all", *f.timeout, path)
			return exitTimeout
		}
		*f.timeout = left
	}
	ctx, stop := interruptible()
	defer stop()
	// The file as given: paths in it resolve against its directory,
	// which a symlink's may not be.
	return e.spawnCold(ctx, f, *f.cfgPath)
}

// newExecFlags are exec's flags: spawn's, and the serve's socket.
func newExecFlags(e *cliEnv) (*flag.FlagSet, *spawnFlags, *string) {
	fs, f := newSpawnFlags("exec", e)
	socket := fs.String("socket", "", "the socket of a serve to run the call through (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(e.getenv)+" if a serve listens there)")
	return fs, f, socket
}

// execConfig is the canonical path of exec's --config, which it requires.
func (e *cliEnv) execConfig(f *spawnFlags) (string, int) {
	if *f.cfgPath == "" {
		e.errorf("exec: --config is required")
		return "", exitUsage
	}
	cfg, err := canonicalConfig(e.path(*f.cfgPath))
	if err != nil {
		e.errorf("exec: config: %v", err)
		return "", exitUsage
	}
	return cfg, exitOK
}

// relay runs exec's call through the serve on path, in this process: as
// the binary's takeover does before main (execrelay.Tried), for a run
// that did not start as the binary.
func (e *cliEnv) relay(path string, explicit bool, args []string) *execrelay.Attempt {
	start := time.Now()
	dir, err := os.Getwd()
	if err != nil {
		return &execrelay.Attempt{Socket: path, Explicit: explicit, Result: execrelay.Result{Err: err}, Start: start}
	}
	terminal := false
	if f, ok := e.stdin.(*os.File); ok {
		terminal = isTerminal(f)
	}
	c := &execrelay.Call{
		Socket:  path,
		Request: execrelay.Request{Args: args, Dir: dir, Env: os.Environ(), StdinTerminal: terminal},
		Stdin:   e.stdin,
		Stdout:  e.stdout,
		Stderr:  e.stderr,
		Prog:    execrelay.Prog,
		Start:   start,
	}
	return &execrelay.Attempt{Socket: path, Explicit: explicit, Result: c.Run(), Start: start}
}
