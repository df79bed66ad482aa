package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Provision provisions the sandbox s declares — a provider mode, such as
// docker_codegen — in the plugin that serves its mode, and returns its
// endpoint and token once the endpoint answers. workspace, when not
// empty, replaces the configuration's. timeout bounds it all, the
// plugin's start included (plugin.DefaultProvisionTimeout when zero).
//
// The sandbox lives in the plugin process: it is released by Release,
// by Close (the plugin releases what it holds as it stops), or when the
// process dies.
func (h *Host) Provision(ctx context.Context, s config.Sandbox, workspace string, timeout time.Duration) (plugin.Provisioned, error) {
	return h.ProvisionWith(ctx, s, ProvisionOptions{Workspace: workspace, Timeout: timeout})
}

// ProvisionOptions qualify a ProvisionWith.
type ProvisionOptions struct {
	// Workspace, when not empty, replaces the configuration's.
	Workspace string
	// WorkspaceVolume, when not empty, names the workspace volume the
	// sandbox mounts as its workspace, kept past its release (see
	// plugin.VolumeKeeper); a plugin that keeps none refuses with
	// plugin.ErrNoWorkspaceVolumes.
	WorkspaceVolume string
	// Timeout bounds it all (plugin.DefaultProvisionTimeout when zero).
	Timeout time.Duration
}

// ProvisionWith is Provision with a workspace volume.
func (h *Host) ProvisionWith(ctx context.Context, s config.Sandbox, opts ProvisionOptions) (plugin.Provisioned, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = plugin.DefaultProvisionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	srv, err := h.resolve(ctx, s.Mode, s.Plugin, s.Version)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	d, err := srv.inst.describe(ctx, false)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	if !isProvider(d.Modes, s.Mode) {
		return plugin.Provisioned{}, fmt.Errorf(
			"sandbox %s: mode %s of plugin %s is a sandbox mode: it runs commands and hands out no endpoint: %w", s.Name, s.Mode, srv.inst.cand, ErrNotProvider)
	}
	rpc, _, err := srv.inst.live(ctx)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	p, err := rpc.Provision(ctx, plugin.ProvisionSpec{Name: s.Name, Mode: s.Mode, Config: s.Config, Workspace: opts.Workspace, WorkspaceVolume: opts.WorkspaceVolume},
		time.Until(deadlineOf(ctx)))
	if err != nil {
		if sandbox.Done(ctx) {
			return plugin.Provisioned{}, sandbox.NewError(sandbox.KindTimeout,
				fmt.Sprintf("provision sandbox %s in plugin %s: no answer within %s", s.Name, srv.inst.cand, timeout), err)
		}
		return plugin.Provisioned{}, err
	}
	srv.inst.opened.Store(true)
	h.mu.Lock()
	if h.provisioned == nil {
		h.provisioned = make(map[string]*instance)
	}
	h.provisioned[p.ID] = srv.inst
	h.mu.Unlock()
	return p, nil
}

// ErrNotProvider is a Provision of a sandbox whose mode is not a
// provider mode: the config asks for what the mode cannot do, so it is
// no failure of the sandbox (no sandbox.Kind; the CLI exits 2).
var ErrNotProvider = errors.New("not a provider mode")

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

func isProvider(modes []plugin.ModeInfo, mode string) bool {
	for _, m := range modes {
		if m.Name == mode {
			return m.Provider
		}
	}
	return false
}

// Release releases a sandbox this host provisioned. An id it does not
// know is plugin.ErrNotProvisioned.
func (h *Host) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	rpc, err := h.clientOf(id, "release "+id)
	if err != nil {
		return err
	}
	if err := rpc.Release(ctx, id, opts); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.provisioned, id)
	h.mu.Unlock()
	return nil
}

// Pause pauses a sandbox this host provisioned (see plugin.Pauser).
func (h *Host) Pause(ctx context.Context, id string) error {
	return h.setPaused(ctx, id, true)
}

// Resume resumes a sandbox this host provisioned.
func (h *Host) Resume(ctx context.Context, id string) error {
	return h.setPaused(ctx, id, false)
}

func (h *Host) setPaused(ctx context.Context, id string, paused bool) error {
	rpc, err := h.clientOf(id, map[bool]string{true: "pause ", false: "resume "}[paused]+id)
	if err != nil {
		return err
	}
	if paused {
		return rpc.Pause(ctx, id)
	}
	return rpc.Resume(ctx, id)
}

// Fork forks a sandbox this host provisioned (see plugin.Forker); the
// forks are this host's too.
func (h *Host) Fork(ctx context.Context, id string, count int) ([]plugin.Provisioned, error) {
	rpc, err := h.clientOf(id, "fork "+id)
	if err != nil {
		return nil, err
	}
	got, err := rpc.Fork(ctx, id, count)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if inst := h.provisioned[id]; inst != nil {
		for _, p := range got {
			h.provisioned[p.ID] = inst
		}
	}
	h.mu.Unlock()
	return got, nil
}

// clientOf is the client of the running plugin process that provisioned
// id; what names the operation in errors.
func (h *Host) clientOf(id, what string) (*plugin.Client, error) {
	h.mu.Lock()
	inst, ok := h.provisioned[id]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w by this host", what, plugin.ErrNotProvisioned)
	}
	rpc, err := inst.running()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return rpc, nil
}

// List returns the sandboxes provisioned through this host's running
// plugin processes and not released, without tokens, oldest first.
// opts.Usage asks for what each uses now.
func (h *Host) List(ctx context.Context, opts plugin.ListOptions) ([]plugin.Provisioned, error) {
	h.mu.Lock()
	seen := map[*instance]bool{}
	var insts []*instance
	for _, inst := range h.provisioned {
		if !seen[inst] {
			seen[inst] = true
			insts = append(insts, inst)
		}
	}
	h.mu.Unlock()
	var out []plugin.Provisioned
	var errs []error
	for _, inst := range insts {
		rpc, err := inst.running()
		if err != nil {
			continue // its process is gone, and its sandboxes with it
		}
		l, err := rpc.List(ctx, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l.Sandboxes...)
		if len(l.Warnings) > 0 {
			errs = append(errs, plugin.ListWarnings(l.Warnings))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, errors.Join(errs...)
}

// Volumes returns the workspace volumes kept by the provider of the
// sandbox s declares, attached or not, starting its plugin if it is not
// running: volumes outlive the plugin processes that made them. What the
// plugin could not list comes back as plugin.ListWarnings, with the
// rest.
func (h *Host) Volumes(ctx context.Context, s config.Sandbox) ([]plugin.WorkspaceVolume, error) {
	srv, err := h.resolve(ctx, s.Mode, s.Plugin, s.Version)
	if err != nil {
		return nil, err
	}
	rpc, _, err := srv.inst.live(ctx)
	if err != nil {
		return nil, err
	}
	l, err := rpc.List(ctx, plugin.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []plugin.WorkspaceVolume
	for _, v := range l.Volumes {
		if v.Mode == s.Mode {
			out = append(out, v)
		}
	}
	if len(l.Warnings) > 0 {
		return out, plugin.ListWarnings(l.Warnings)
	}
	return out, nil
}

// errNotRunning is a plugin process that has exited: what it provisioned
// went with it.
var errNotRunning = sandbox.NewError(sandbox.KindTransport, "the plugin process that provisioned it has exited (its sandboxes went with it)", nil)

// running is the client of the live process, without starting one: a
// new process holds none of the old one's sandboxes.
func (i *instance) running() (*plugin.Client, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc == nil || i.proc.client.Exited() {
		return nil, errNotRunning
	}
	return i.proc.rpc, nil
}

// Provides reports whether mode is a provider mode of the plugin that
// serves it (pin and constraint as in a sandbox entry), starting the
// plugin to ask when the describe cache does not know.
func (h *Host) Provides(ctx context.Context, mode, pin, constraint string) bool {
	srv, err := h.resolve(ctx, mode, pin, constraint)
	if err != nil {
		return false
	}
	d, err := srv.inst.describe(ctx, false)
	return err == nil && isProvider(d.Modes, mode)
}

// Holds reports whether the plugin process that provisioned id is still
// running: when it is not, the sandbox is gone with it.
func (h *Host) Holds(id string) bool {
	h.mu.Lock()
	inst, ok := h.provisioned[id]
	h.mu.Unlock()
	if !ok {
		return false
	}
	_, err := inst.running()
	return err == nil
}
