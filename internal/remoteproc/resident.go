package remoteproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// runResident runs c through the resident rc: a fork and exec inside the
// target, no exec session. Its errors are classified as Run's.
func (e *Engine) runResident(ctx context.Context, rc *resident.Client, c Call, what string, stdout, stderr io.Writer) (int, error) {
	// The resident's own bound, past the call's deadline (ctx's), only
	// matters when the plugin is gone.
	left := c.Timeout
	if d, ok := ctx.Deadline(); ok {
		left = max(time.Until(d), 0)
	}
	res, err := rc.Run(ctx, resident.Call{
		Command:     c.Command,
		Args:        c.Args,
		Env:         c.Env,
		Stdin:       c.Stdin,
		Timeout:     left + ResidentBackstop,
		OutputLimit: c.OutputLimit + 1, // one byte past the cap lets the writer's own cap see the cut
	}, stdout, stderr)
	switch {
	case err == nil:
		return res.Code, nil
	case sandbox.Done(ctx):
		return 0, sandbox.ContextError(ctx, what, c.Timeout)
	case errors.Is(err, resident.ErrNotFound):
		return 0, e.notFound(what)
	case errors.Is(err, resident.ErrEnded):
		// The resident went away mid-call (its container stopped, its
		// pod was deleted): the target says why, if it can.
		if xerr := e.explain(ctx, nil, ""); xerr != nil {
			return 0, xerr
		}
		return 0, sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: the resident in %s", what, e.t), err)
	case sandbox.KindOf(err) == sandbox.KindStart:
		return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s in %s", err, e.t), nil)
	}
	return 0, err
}
