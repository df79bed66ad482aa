package dockerbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
	"github.com/altairalabs/promptkit-sandbox/internal/mcpready"
	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// CodegenProvider serves docker_codegen: each Provision starts a sandboxd
// container from the configured image with no network, its workspace at
// /workspace and a private host directory at /run/sandboxd holding a
// fresh token and sandboxd's unix socket, and forwards a loopback port of
// this process to that socket. See docs/docker.md.
type CodegenProvider struct {
	hard Hardening
	log  hclog.Logger
	root string

	boxes *provision.Holder
	pools warmpool.Entries[*pooledBox]

	// getenv reads the OTEL_* variables that say where spans go; the
	// sandboxes' go there too, by a relay.
	getenv func(string) string

	mu     sync.Mutex
	cli    *client.Client
	closed bool
	// attached maps a workspace volume to the sandbox of this process
	// that has it (codegen_volume.go).
	attached map[string]string
}

var _ plugin.Provider = (*CodegenProvider)(nil)

// NewCodegenProvider returns the docker_codegen provider; it talks to the
// engine on first use.
func NewCodegenProvider(h Hardening, log hclog.Logger) *CodegenProvider {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &CodegenProvider{hard: h, log: log, root: codegenRoot(), boxes: provision.NewHolder(log), getenv: os.Getenv}
}

// codegenBox is one provisioned sandbox.
type codegenBox struct {
	info plugin.Provisioned
	idle time.Duration
	fwd  *loopback.Forwarder
	// metrics forwards a port to sandboxd's metrics socket, relay its
	// spans to the collector; nil when off.
	metrics *loopback.Forwarder
	relay   *tracing.Relay
	// egress is the sandbox's proxy to what its egress rules allow;
	// nil without rules.
	egress *egress.Proxy
	ctr    *codegenContainer
	dir    *privateDir
	// cache is the build cache volume; nil with cache: none.
	cache *cacheVolume
	// vol is the workspace volume mounted as its workspace; nil for a
	// host directory.
	vol *workspaceVolume
	// claimed is when a pooled sandbox was handed out.
	claimed time.Time
	// paused: the container is frozen (codegen_pause.go).
	paused atomic.Bool
	// purging: a Purge follows the teardown, and the workspace volume
	// stays reserved in this process until the Purge has removed it.
	purging atomic.Bool
	// sleepIdle: on_idle: pause.
	sleepIdle bool
	// set is what it was started with: a fork starts with the same.
	set codegenSettings
}

// Check validates a docker_codegen configuration; an entry with `warm:
// N` starts filling its pool.
func (p *CodegenProvider) Check(name string, cfg map[string]any) error {
	set, err := parseCodegenConfig(cfg, p.hard)
	if err == nil {
		p.prewarm(name, cfg, set)
	}
	return err
}

func (p *CodegenProvider) client() (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, sandbox.NewError(sandbox.KindStart, CodegenMode+": the provider is shutting down", nil)
	}
	if p.cli == nil {
		cli, err := newClient()
		if err != nil {
			return nil, err
		}
		p.cli = cli
	}
	return p.cli, nil
}

// Provision starts a sandbox and returns once an MCP initialize through
// its endpoint has been answered; with `warm: N` and no host workspace,
// it hands out one of the entry's pooled sandboxes when one is ready
// (see codegen_pool.go). Whatever fails, nothing of it is left.
func (p *CodegenProvider) Provision(ctx context.Context, spec plugin.ProvisionSpec) (_ plugin.Provisioned, err error) {
	ctx, span := tracing.StartCall(ctx, CodegenMode, "sandboxd")
	defer func() { tracing.End(span, err) }()
	set, err := p.settings(spec)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	b, start, err := p.claim(ctx, spec, set)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	b.info.Details["start"] = start
	p.log.Info("codegen sandbox", "sandbox", spec.Name, "id", b.info.ID, "start", start)
	if err := p.boxes.Add(b); err != nil {
		p.discard(b)
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	return b.info, nil
}

// settings validates spec's configuration and the workspace it names
// (the spec's replaces the configuration's).
func (p *CodegenProvider) settings(spec plugin.ProvisionSpec) (codegenSettings, error) {
	set, err := parseCodegenConfig(spec.Config, p.hard)
	if err != nil {
		return set, err
	}
	if set.tmpfs > 0 && (spec.Workspace != "" || spec.WorkspaceVolume != "") {
		return set, fmt.Errorf("%s: the entry's workspace is a tmpfs (workspace_tmpfs); it cannot be a host directory or a workspace volume (%s)", CodegenMode, spec.Workspace+spec.WorkspaceVolume)
	}
	if spec.WorkspaceVolume != "" {
		if spec.Workspace != "" {
			return set, fmt.Errorf("%s: a workspace (%s) and a workspace volume (%s) exclude each other", CodegenMode, spec.Workspace, spec.WorkspaceVolume)
		}
		if err := checkVolumeName(spec.WorkspaceVolume); err != nil {
			return set, err
		}
		// The volume replaces the configuration's workspace.
		set.workspace, set.volume = "", spec.WorkspaceVolume
		return set, nil
	}
	if spec.Workspace != "" {
		set.workspace = spec.Workspace
	}
	if set.workspace == "" {
		return set, nil
	}
	if set.workspace, err = resolveWorkspace(set.workspace); err != nil {
		return set, err
	}
	if err := set.resolveUser(set.workspace, p.hard); err != nil {
		return set, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	return set, checkWritable(set.workspace, set.uid, set.gid)
}

// start starts a sandbox of set named name and returns once an MCP
// initialize through its endpoint has been answered. Whatever fails,
// nothing of it is left.
func (p *CodegenProvider) start(ctx context.Context, name string, set codegenSettings) (_ *codegenBox, err error) {
	cli, err := p.client()
	if err != nil {
		return nil, err
	}
	img, err := chooseImage(ctx, cli, set, set.workspace)
	if err != nil {
		return nil, err
	}
	set.image = img.ref
	p.log.Debug("codegen sandbox image", "sandbox", name, "image", img.ref, "languages", strings.Join(img.languages, ","), "chosen_by", img.by, "detected", img.detected)
	b := &codegenBox{idle: set.idle, sleepIdle: set.sleepIdle}
	ok := false
	defer func() {
		if !ok {
			// The provision's own error is what the caller sees; what
			// teardown could not remove is only logged.
			terr := b.teardown(context.WithoutCancel(ctx))
			if b.vol != nil && b.vol.created {
				// Made for this provision, holding nothing yet.
				terr = errors.Join(terr, b.vol.remove(context.WithoutCancel(ctx)))
			}
			if terr != nil {
				p.log.Warn("codegen sandbox: cleaning up a failed provision", "sandbox", name, "error", terr)
			}
		}
	}()
	id := newSandboxID()
	if b.dir, err = newPrivateDir(p.root, id); err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	// workspace is what is mounted: a host directory, or a volume's name.
	workspace, cacheKey := set.workspace, set.workspace
	switch {
	case set.volume != "":
		// The sandbox runs as the configured user or the image's: a
		// volume has no owner to go by until it exists.
		if err := set.resolveUser("", p.hard); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		if b.vol, err = p.attachVolume(ctx, cli, set.volume, id, set.image, set.uid, set.gid); err != nil {
			return nil, err
		}
		workspace, cacheKey = set.volume, "volume:"+set.volume
	case set.tmpfs > 0:
		// Owned by the image's user (or the entry's), as a volume is.
		if err := set.resolveUser("", p.hard); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		cacheKey = "tmpfs:" + id
	case workspace == "":
		if err := b.dir.makeWorkspace(); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		workspace, cacheKey = b.dir.workspace, b.dir.workspace
	}
	if err := set.resolveUser(workspace, p.hard); err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	if set.cache != cacheNone {
		scope := set.cache
		if b.dir.workspace != "" || set.tmpfs > 0 {
			// A workspace made for this sandbox goes with it, and
			// nothing could find its cache again.
			scope = cacheSandbox
		}
		if b.cache, err = makeCacheVolume(ctx, cli, cacheKey, scope, id); err != nil {
			return nil, err
		}
	}
	token, err := b.dir.writeToken()
	if err == nil {
		err = b.dir.handTo(set.uid, set.gid)
	}
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	if b.fwd, err = loopback.New(loopback.Unix(b.dir.run + "/" + socketName)); err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	endpoint := "http://" + b.fwd.Addr() + mcpready.Path
	details := img.details()
	if set.metrics {
		if b.metrics, err = loopback.New(loopback.Unix(b.dir.run + "/" + metricsSocketName)); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		details["metrics"] = "http://" + b.metrics.Addr() + "/metrics"
	}
	cs := codegenSpec{sandboxID: id, name: name, set: set, dir: b.dir, workspace: workspace, hard: p.hard, cache: b.cache, volume: b.vol != nil}
	if collector := tracing.ExportURL(p.getenv); collector != "" {
		if b.relay, err = tracing.NewRelay(b.dir.run+"/"+otlpSocketName, collector); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		cs.traces, cs.traceEnv = true, tracing.ContextEnv(ctx)
	}
	if set.egress != nil {
		if err := p.startEgress(b, name, set.egress); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		details["egress"] = egress.Describe(set.egress)
	}
	if set.seed != "" {
		if err := copyWorkspace(ctx, cli, set.image, set.uid, set.gid, set.seed, workspace); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
	}
	b.ctr, err = startCodegen(ctx, cli, cs)
	if err != nil {
		return nil, err
	}
	if err := mcpready.Wait(ctx, CodegenMode, endpoint, token, b.ctr); err != nil {
		return nil, err
	}
	b.info = plugin.Provisioned{
		ID: id, Name: name, Mode: CodegenMode, Endpoint: endpoint, Token: token, Workspace: workspace, Created: time.Now(),
		Details: details,
	}
	if b.vol != nil {
		b.info.Workspace, b.info.WorkspaceVolume = "", b.vol.name
		details["workspace_volume"] = b.vol.name
	}
	maps.Copy(details, map[string]string{
		"container": b.ctr.id, "dir": b.dir.dir, "network": set.network,
		"user":         strconv.Itoa(set.uid) + ":" + strconv.Itoa(set.gid),
		"idle_timeout": set.idle.String(),
		"workspace_by": workspaceBy(b, set),
		"cache":        cacheNone,
	})
	if b.cache != nil {
		details["cache"], details["cache_volume"] = b.cache.scope, b.cache.name
	}
	if set.tmpfs > 0 {
		details["workspace_tmpfs"] = strconv.FormatInt(set.tmpfs, 10)
	}
	b.set = set
	ok = true
	return b, nil
}

// workspaceBy says who gave the workspace: the provider made it (a host
// directory, or a tmpfs), the user named a host directory, or a
// workspace volume.
func workspaceBy(b *codegenBox, set codegenSettings) string {
	switch {
	case b.vol != nil:
		return "volume"
	case set.tmpfs > 0:
		return "tmpfs"
	case b.dir.workspace != "":
		return "provider"
	}
	return "user"
}

func newSandboxID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "cg-" + hex.EncodeToString(b[:])
}

// teardown stops what the box has: the port first (no new connection),
// then the container's processes (a kill is quick), then its private
// directory (token, socket, and a workspace the provider made), and last
// the container's removal, which an engine can take seconds over: a
// plugin killed while it waits (its host gives it 2 s) has left nothing
// the engine will not finish removing. A workspace it was given is left
// alone, and so is a cache volume of the workspace (see Purge); one of
// the sandbox goes once the container has.
func (b *codegenBox) teardown(ctx context.Context) error {
	if b.fwd != nil {
		b.fwd.Close()
	}
	if b.metrics != nil {
		b.metrics.Close()
	}
	if b.relay != nil {
		_ = b.relay.Close()
	}
	if b.egress != nil {
		_ = b.egress.Close()
	}
	if b.ctr != nil {
		b.thaw(ctx)
		b.ctr.kill(ctx)
	}
	var err error
	if b.dir != nil {
		if rerr := b.dir.remove(); rerr != nil {
			err = fmt.Errorf("%s: remove %s: %w", CodegenMode, b.dir.dir, rerr)
		}
	}
	if b.ctr != nil {
		b.ctr.remove(ctx)
	}
	if b.cache != nil && b.cache.scope == cacheSandbox {
		err = errors.Join(err, b.cache.remove(ctx))
	}
	if b.vol != nil && !b.purging.Load() {
		// Kept for the next sandbox: only Purge removes it, and until
		// then no provision of this process may take it.
		b.vol.detach()
	}
	return err
}

// PurgeFollows makes a box a provision.PurgeFollower: its teardown keeps
// the workspace volume reserved in this process for the Purge.
func (b *codegenBox) PurgeFollows() { b.purging.Store(true) }

// Purge makes a box a provision.Purger: a Release with Purge removes the
// workspace's cache volume too, after the teardown has removed the
// container that mounted it.
func (b *codegenBox) Purge(ctx context.Context) error {
	var err error
	if b.cache != nil && b.cache.scope == cacheWorkspace {
		err = b.cache.remove(ctx)
	}
	if b.vol != nil {
		err = errors.Join(err, b.vol.remove(ctx))
		b.vol.detach()
	}
	return err
}

// Info, IdleSince and IdleTimeout make a box a provision.Box.
func (b *codegenBox) Info() plugin.Provisioned           { return b.info }
func (b *codegenBox) IdleTimeout() time.Duration         { return b.idle }
func (b *codegenBox) Teardown(ctx context.Context) error { return b.teardown(ctx) }

func (b *codegenBox) IdleSince() time.Time {
	// A pooled sandbox's port was last used by the pool's readiness
	// check, long before its claim.
	t := b.fwd.IdleSince()
	if !t.IsZero() && t.Before(b.claimed) {
		return b.claimed
	}
	return t
}

// Dead makes a box a provision.Mortal: its container may exit by itself.
func (b *codegenBox) Dead() string { return b.ctr.dead() }

// Release removes the sandbox's container and private directory, and
// its cache volume unless that is kept for the workspace (`cache:
// workspace`) and opts.Purge is false.
func (p *CodegenProvider) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	return p.boxes.Release(ctx, id, opts)
}

// List returns the sandboxes held, without their tokens, and with
// opts.Usage what each uses now (codegen_usage.go).
func (p *CodegenProvider) List(ctx context.Context, opts plugin.ListOptions) ([]plugin.Provisioned, error) {
	list := p.boxes.List()
	if opts.Usage {
		p.withUsage(ctx, list)
	}
	return list, nil
}

// Close drains the warm pools and releases every sandbox, concurrently:
// the plugin is stopping, and nothing it started may outlive it.
func (p *CodegenProvider) Close() error {
	p.mu.Lock()
	p.closed = true
	cli := p.cli
	p.mu.Unlock()
	p.pools.Close()
	err := p.boxes.Close()
	if cli != nil {
		err = errors.Join(err, cli.Close())
	}
	return err
}
