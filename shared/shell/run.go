package shell

import (
	"context"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Run starts req, waits for it and returns its result: Start and Wait in
// one call, with Response.Err set on every failure, a failed start
// included.
func Run(ctx context.Context, req sandbox.Request, opts Options) (sandbox.Response, error) {
	p, err := Start(ctx, req, opts)
	if err != nil {
		return sandbox.Response{Err: err}, err
	}
	return p.Wait()
}
