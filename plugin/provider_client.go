package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// ErrNoProviderService is a plugin that does not serve the Provider
// service at all: one built before providers existed.
var ErrNoProviderService = errors.New("the plugin does not serve the Provider service (built before providers; upgrade it)")

// Provision asks the plugin for a sandbox of a provider mode and returns
// once its endpoint answers. Errors: a configuration the plugin rejects
// is a plain error with its words; a sandbox that could not start keeps
// its kind (KindStart, KindTransport); a plugin without the service is
// ErrNoProviderService (KindTransport); a lost plugin as for Open.
//
// timeout bounds the provisioning in the plugin (zero: its default).
func (c *Client) Provision(ctx context.Context, spec ProvisionSpec, timeout time.Duration) (Provisioned, error) {
	if err := c.exited(); err != nil {
		return Provisioned{}, err
	}
	d := timeout
	if d <= 0 {
		d = DefaultProvisionTimeout
	}
	ctx, cancel := bounded(ctx, d+sandbox.Grace)
	defer cancel()
	if c.PluginName() == "" {
		if _, err := c.Describe(ctx); err != nil {
			return Provisioned{}, err
		}
	}
	var raw []byte
	if len(spec.Config) > 0 {
		var err error
		if raw, err = json.Marshal(spec.Config); err != nil {
			return Provisioned{}, fmt.Errorf("config: %w", err)
		}
	}
	what := "provision " + spec.Name
	resp, err := c.prov.Provision(ctx, &sandboxpb.ProvisionRequest{
		Name: spec.Name, Mode: spec.Mode, ConfigJson: raw, Workspace: spec.Workspace, TimeoutNanos: int64(max(timeout, 0)),
		WorkspaceVolume: spec.WorkspaceVolume,
	}, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		if st := status.Convert(err); spec.WorkspaceVolume != "" && st.Code() == codes.FailedPrecondition && len(st.Details()) == 0 {
			// A sandbox that could not start carries its kind in a
			// detail; without one, the provider keeps no volumes.
			msg := strings.TrimSuffix(st.Message(), ": "+ErrNoWorkspaceVolumes.Error())
			return Provisioned{}, fmt.Errorf("%s: %w", msg, ErrNoWorkspaceVolumes)
		}
		return Provisioned{}, c.providerError(ctx, what, err)
	}
	p := fromProto(resp.GetSandbox())
	if p.ID == "" || p.Endpoint == "" {
		return Provisioned{}, connectionError(c.label(), what+": no id or endpoint in the answer", nil)
	}
	if p.WorkspaceVolume != spec.WorkspaceVolume {
		// A plugin that predates workspace volumes ignored the request
		// and made a workspace of its own: the agent's files would go
		// there and die with the sandbox. It is never handed out.
		err := fmt.Errorf("plugin %s: %s: asked for workspace volume %q, it made a sandbox without one (it predates workspace volumes; upgrade it): %w",
			c.label(), what, spec.WorkspaceVolume, ErrNoWorkspaceVolumes)
		if rerr := c.Release(context.WithoutCancel(ctx), p.ID, ReleaseOptions{}); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release the sandbox %s it made: %w", p.ID, rerr))
		}
		return Provisioned{}, err
	}
	return p, nil
}

// Release stops a sandbox the plugin provisioned. An id it does not hold
// is ErrNotProvisioned.
func (c *Client) Release(ctx context.Context, id string, opts ReleaseOptions) error {
	if err := c.exited(); err != nil {
		return err
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	if _, err := c.prov.Release(ctx, &sandboxpb.ReleaseRequest{Id: id, Purge: opts.Purge}); err != nil {
		return c.providerError(ctx, "release "+id, err)
	}
	return nil
}

// List returns what the plugin has provisioned and not released,
// without tokens, and the workspace volumes its providers keep.
func (c *Client) List(ctx context.Context, opts ListOptions) (Listing, error) {
	if err := c.exited(); err != nil {
		return Listing{}, err
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	resp, err := c.prov.List(ctx, &sandboxpb.ListRequest{Usage: opts.Usage}, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		return Listing{}, c.providerError(ctx, "list", err)
	}
	out := Listing{Sandboxes: make([]Provisioned, 0, len(resp.GetSandboxes())), Volumes: make([]WorkspaceVolume, 0, len(resp.GetVolumes()))}
	for _, p := range resp.GetSandboxes() {
		out.Sandboxes = append(out.Sandboxes, fromProto(p))
	}
	for _, v := range resp.GetVolumes() {
		out.Volumes = append(out.Volumes, volumeFromProto(v))
	}
	out.Warnings = resp.GetWarnings()
	return out, nil
}

// providerError classifies a failed Provider call as Open's errors are.
func (c *Client) providerError(ctx context.Context, what string, err error) error {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument:
		return errors.New(st.Message())
	case codes.NotFound:
		return fmt.Errorf("plugin %s: %s: %w", c.label(), what, ErrNotProvisioned)
	case codes.Unimplemented:
		return sandbox.Errorf(sandbox.KindTransport, "plugin %s: %s: %w", c.label(), what, ErrNoProviderService)
	case codes.FailedPrecondition:
		for _, d := range st.Details() {
			if res, ok := d.(*sandboxpb.SpawnResult); ok {
				if err := errorOf(res); err != nil {
					return err
				}
			}
		}
		return errors.New(st.Message())
	case codes.Unknown:
		return fmt.Errorf("plugin %s: %s: %s", c.label(), what, st.Message())
	}
	return c.callError(ctx, what, err)
}
