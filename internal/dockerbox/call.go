package dockerbox

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// caller is what both modes share for a call: the settings every mode
// has, the warm pool, the removal of finished calls, and how to prepare a
// call of its own when the pool has none ready.
type caller struct {
	mode    string
	set     *common
	pool    *warmpool.Pool[prepared] // nil without one
	reaper  *warmpool.Reaper
	prepare func(ctx context.Context, spec runSpec) (prepared, error)
}

// spawn runs req: a warm prepared call if the pool has one, else one of
// its own; stdout and stderr, when not nil, receive the output as it
// comes (a streaming Spawn).
func (c caller) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (resp sandbox.Response, err error) {
	spec := runSpec{
		command: req.Command,
		args:    req.Args,
		env:     shell.MergeEnv(c.set.env, req.Env, os.LookupEnv),
		what:    fmt.Sprintf("command %q", req.Command),
		timeout: c.set.timeout,
	}
	if req.Timeout > 0 {
		spec.timeout = req.Timeout
	}
	ctx, span := tracing.StartCall(ctx, c.mode, req.Command)
	out := shell.NewOutputs(c.set.outputLimit, stdout, stderr)
	defer func() {
		out.Fill(&resp)
		resp.Err = err
		tracing.End(span, err)
	}()
	if req.Command == "" {
		return resp, sandbox.NewError(sandbox.KindStart, c.mode+": empty command", nil)
	}
	if ctx.Err() != nil {
		return resp, sandbox.ContextError(ctx, spec.what, 0)
	}
	cctx, cancel := sandbox.Expire(ctx, spec.timeout)
	defer cancel()

	var pr prepared
	key := spec.key()
	if c.pool != nil {
		pr, _ = c.pool.Take(cctx, key, func(ctx context.Context) (prepared, error) { return c.prepare(ctx, spec) })
	}
	if pr == nil {
		if pr, err = c.prepare(cctx, spec); err != nil {
			return resp, err
		}
	}
	code, err := pr.finish(cctx, req.Stdin, out)
	// The container goes off the call's path; Close waits for it. On a
	// timeout or a cancellation finish has killed it already (within
	// stopBudget): an engine that did not answer in time does not hold
	// the caller, and the removal kills it then.
	c.reaper.Reap(pr)
	if c.pool != nil {
		c.pool.Replenish(key)
	}
	if err != nil {
		return resp, err
	}
	if code != 0 {
		return resp, &sandbox.ExitError{Code: code}
	}
	return resp, nil
}
