package plugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// Forker is a Provider that can fork its sandboxes: Fork provisions
// count new sandboxes of the same entry whose workspaces start as copies
// of the sandbox id's, independent afterwards, all or none. An id it
// does not hold is ErrNotProvisioned.
type Forker interface {
	Fork(ctx context.Context, id string, count int) ([]Provisioned, error)
}

// ErrCannotFork is a Fork of a sandbox whose provider cannot fork it.
var ErrCannotFork = errors.New("its provider cannot fork sandboxes")

func (ps *providerServer) Fork(ctx context.Context, req *sandboxpb.ForkRequest) (*sandboxpb.ForkResponse, error) {
	s := ps.srv
	pr, err := ps.ownerOf(req.GetId())
	if err != nil {
		return nil, err
	}
	f, ok := pr.(Forker)
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %s: %v", req.GetId(), ErrCannotFork)
	}
	got, err := f.Fork(ctx, req.GetId(), int(req.GetCount()))
	switch {
	case errors.Is(err, ErrNotProvisioned):
		return nil, status.Errorf(codes.NotFound, "plugin %s: %v", s.name, err)
	case err != nil:
		return nil, openStatus(err)
	}
	resp := &sandboxpb.ForkResponse{}
	s.providers.mu.Lock()
	for _, p := range got {
		s.providers.owner[p.ID] = pr
		resp.Sandboxes = append(resp.Sandboxes, toProto(p, true))
	}
	s.providers.mu.Unlock()
	s.log.Info("forked", "id", req.GetId(), "count", len(got))
	return resp, nil
}

// Fork forks a sandbox the plugin provisioned (see Forker).
func (c *Client) Fork(ctx context.Context, id string, count int) ([]Provisioned, error) {
	what := "fork " + id
	if err := c.exited(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultProvisionTimeout)
	defer cancel()
	resp, err := c.prov.Fork(ctx, &sandboxpb.ForkRequest{Id: id, Count: int32(min(max(count, 0), 1<<16))}, grpc.MaxCallRecvMsgSize(maxMessage)) // #nosec G115 -- clamped
	switch st := status.Convert(err); {
	case err == nil:
	case st.Code() == codes.FailedPrecondition && len(st.Details()) == 0:
		// A fork that could not start carries its kind in a detail.
		return nil, fmt.Errorf("plugin %s: %s: %w", c.label(), what, ErrCannotFork)
	case st.Code() == codes.Unimplemented:
		return nil, fmt.Errorf("plugin %s: %s: %w (the plugin predates forking)", c.label(), what, ErrCannotFork)
	default:
		return nil, c.providerError(ctx, what, err)
	}
	out := make([]Provisioned, 0, len(resp.GetSandboxes()))
	for _, p := range resp.GetSandboxes() {
		out = append(out, fromProto(p))
	}
	return out, nil
}
