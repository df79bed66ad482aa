package main

import (
	"context"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
)

// servedProviders are the provider sandboxes of a serve's config (a
// docker_codegen one, say), each offered as provider mode CONFIG#NAME,
// provisioning through the plugin host serve keeps alive: so `codegen up`
// can hand a sandbox to serve and return, the forwarder living on in
// serve's plugin process.
func servedProviders(ctx context.Context, rt *hooks.Runtime, cfg string) map[string]plugin.Provider {
	h, ok := rt.Plugins().(*host.Host)
	if !ok {
		return nil
	}
	out := map[string]plugin.Provider{}
	for _, s := range rt.File().Sandboxes {
		if h.Provides(ctx, s.Mode, s.Plugin, s.Version) {
			out[servedMode(cfg, s.Name)] = &servedProvider{h: h, s: s}
		}
	}
	return out
}

// servedProvider provisions one sandbox of the config through the host.
// The host owns what it provisions: serve's shutdown stops the plugins,
// which release it.
type servedProvider struct {
	h *host.Host
	s config.Sandbox
}

// Check accepts anything: the config was checked when serve loaded it,
// and an exec of it gets the plugin's refusal to run commands.
func (p *servedProvider) Check(string, map[string]any) error { return nil }

func (p *servedProvider) Provision(ctx context.Context, spec plugin.ProvisionSpec) (plugin.Provisioned, error) {
	got, err := p.h.ProvisionWith(ctx, p.s, host.ProvisionOptions{Workspace: spec.Workspace, WorkspaceVolume: spec.WorkspaceVolume})
	if err != nil {
		return plugin.Provisioned{}, err
	}
	return got, nil
}

func (p *servedProvider) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	return p.h.Release(ctx, id, opts)
}

func (p *servedProvider) Pause(ctx context.Context, id string) error  { return p.h.Pause(ctx, id) }
func (p *servedProvider) Resume(ctx context.Context, id string) error { return p.h.Resume(ctx, id) }

func (p *servedProvider) Fork(ctx context.Context, id string, count int) ([]plugin.Provisioned, error) {
	return p.h.Fork(ctx, id, count)
}

// Volumes makes it a plugin.VolumeKeeper: the volumes of its entry's
// mode; serve's plugin server lists each once.
func (p *servedProvider) Volumes(ctx context.Context) ([]plugin.WorkspaceVolume, error) {
	return p.h.Volumes(ctx, p.s)
}

func (p *servedProvider) List(ctx context.Context, opts plugin.ListOptions) ([]plugin.Provisioned, error) {
	all, err := p.h.List(ctx, opts)
	var out []plugin.Provisioned
	for _, sb := range all {
		if sb.Name == p.s.Name {
			out = append(out, sb)
		}
	}
	return out, err
}
