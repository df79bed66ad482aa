package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// Pauser is a Provider that can pause its sandboxes: a paused sandbox's
// processes are frozen (no CPU used), its files, memory and processes
// kept, and its endpoint answers every call with an error saying it is
// paused, until Resume. Pausing a paused sandbox, or resuming a running
// one, does nothing. An id it does not hold is ErrNotProvisioned.
type Pauser interface {
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
}

// ErrCannotPause is a Pause or Resume of a sandbox whose provider cannot
// pause it. A provider that can pause only some of its sandboxes
// refuses the others with an error that Is it and says why.
var ErrCannotPause = errors.New("its provider cannot pause sandboxes")

func (ps *providerServer) SetPaused(ctx context.Context, req *sandboxpb.SetPausedRequest) (*sandboxpb.SetPausedResponse, error) {
	s := ps.srv
	pr, err := ps.ownerOf(req.GetId())
	if err != nil {
		return nil, err
	}
	p, ok := pr.(Pauser)
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %s: %v", req.GetId(), ErrCannotPause)
	}
	set := p.Resume
	if req.GetPaused() {
		set = p.Pause
	}
	switch err := set(ctx, req.GetId()); {
	case errors.Is(err, ErrNotProvisioned):
		return nil, status.Errorf(codes.NotFound, "plugin %s: %v", s.name, err)
	case errors.Is(err, ErrCannotPause):
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %s: %v", req.GetId(), err)
	case err != nil:
		return nil, releaseStatus(err)
	}
	return &sandboxpb.SetPausedResponse{}, nil
}

// Pause pauses a sandbox the plugin provisioned (see Pauser).
func (c *Client) Pause(ctx context.Context, id string) error { return c.setPaused(ctx, id, true) }

// Resume resumes a sandbox the plugin provisioned.
func (c *Client) Resume(ctx context.Context, id string) error { return c.setPaused(ctx, id, false) }

func (c *Client) setPaused(ctx context.Context, id string, paused bool) error {
	what := map[bool]string{true: "pause ", false: "resume "}[paused] + id
	if err := c.exited(); err != nil {
		return err
	}
	// A provider may pause by taking the sandbox down and resume by
	// starting it anew (kubectl_codegen: a Pod): bounded as a Provision.
	ctx, cancel := bounded(ctx, DefaultProvisionTimeout)
	defer cancel()
	_, err := c.prov.SetPaused(ctx, &sandboxpb.SetPausedRequest{Id: id, Paused: paused})
	switch st := status.Convert(err); {
	case err == nil:
		return nil
	case st.Code() == codes.FailedPrecondition:
		// A provider that pauses others may refuse this sandbox, and
		// say why (kubectl_codegen: its workspace would go with its
		// Pod): the reason is kept.
		if msg := st.Message(); !strings.HasSuffix(msg, ErrCannotPause.Error()) {
			return &wrappedError{msg: fmt.Sprintf("plugin %s: %s", c.label(), msg), err: ErrCannotPause}
		}
		return fmt.Errorf("plugin %s: %s: %w", c.label(), what, ErrCannotPause)
	case st.Code() == codes.Unimplemented:
		return fmt.Errorf("plugin %s: %s: %w (the plugin predates pausing)", c.label(), what, ErrCannotPause)
	}
	return c.providerError(ctx, what, err)
}
