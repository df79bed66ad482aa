package remoteproc

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// Defaults are what a sandbox's calls fall back on: its mode (for
// messages), its configured env (under each call's own), timeout and
// output cap.
type Defaults struct {
	Mode        string
	Env         []string
	Timeout     time.Duration
	OutputLimit int
}

// Run runs a call; an Engine's Run, or a backend's wrapper around it.
type Run func(ctx context.Context, c Call, stdout, stderr io.Writer) (int, error)

// Spawn is a sandbox's Spawn over run: it makes the Call of req (its env
// over d's, bare keys forwarded from this process's environment), bounds
// it by the timeout that applies, caps its two streams (passing them on
// to stdout and stderr as they come when stdout is not nil: a streaming
// Spawn), and fills the Response, whose Err is the error returned.
func Spawn(ctx context.Context, req sandbox.Request, d Defaults, stdout, stderr io.Writer, run Run) (resp sandbox.Response, err error) {
	ctx, span := tracing.StartCall(ctx, d.Mode, req.Command)
	out := shell.NewOutputs(d.OutputLimit, stdout, stderr)
	defer func() {
		out.Fill(&resp)
		resp.Err = err
		tracing.End(span, err)
	}()
	if req.Command == "" {
		return resp, sandbox.NewError(sandbox.KindStart, d.Mode+": empty command", nil)
	}
	timeout := d.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	cctx, cancel := sandbox.Expire(ctx, timeout)
	defer cancel()
	code, err := run(cctx, Call{
		Command: req.Command, Args: req.Args, Stdin: req.Stdin,
		Env:     shell.MergeEnv(d.Env, req.Env, os.LookupEnv),
		Timeout: timeout, OutputLimit: d.OutputLimit,
	}, out.Stdout, out.Stderr)
	switch {
	case err != nil:
		return resp, err
	case code != 0:
		return resp, &sandbox.ExitError{Code: code}
	}
	return resp, nil
}
