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
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/loopback"
	"github.com/altairalabs/promptkit-sandbox/shared/mcpready"
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

	// getenv reads the OTEL_* variables that say where spans go; the
	// sandboxes' go there too, by a relay.
	getenv func(string) string

	mu     sync.Mutex
	cli    *client.Client
	closed bool
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
	ctr     *codegenContainer
	dir     *privateDir
	// cache is the build cache volume; nil with cache: none.
	cache *cacheVolume
}

// Check validates a docker_codegen configuration.
func (p *CodegenProvider) Check(_ string, cfg map[string]any) error {
	_, err := parseCodegenConfig(cfg, p.hard)
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
// its endpoint has been answered. Whatever fails, nothing of it is left.
func (p *CodegenProvider) Provision(ctx context.Context, spec plugin.ProvisionSpec) (_ plugin.Provisioned, err error) {
	ctx, span := tracing.StartCall(ctx, CodegenMode, "sandboxd")
	defer func() { tracing.End(span, err) }()
	set, err := parseCodegenConfig(spec.Config, p.hard)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	if spec.Workspace != "" {
		set.workspace = spec.Workspace
	}
	if set.workspace != "" {
		if set.workspace, err = resolveWorkspace(set.workspace); err != nil {
			return plugin.Provisioned{}, err
		}
		if err := set.resolveUser(set.workspace, p.hard); err != nil {
			return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		if err := checkWritable(set.workspace, set.uid, set.gid); err != nil {
			return plugin.Provisioned{}, err
		}
	}
	cli, err := p.client()
	if err != nil {
		return plugin.Provisioned{}, err
	}
	img, err := chooseImage(ctx, cli, set, set.workspace)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	set.image = img.ref
	p.log.Info("codegen sandbox image", "sandbox", spec.Name, "image", img.ref, "languages", strings.Join(img.languages, ","), "chosen_by", img.by, "detected", img.detected)
	b := &codegenBox{idle: set.idle}
	ok := false
	defer func() {
		if !ok {
			b.teardown(context.WithoutCancel(ctx))
		}
	}()
	id := newSandboxID()
	if b.dir, err = newPrivateDir(p.root, id); err != nil {
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	workspace := set.workspace
	if workspace == "" {
		if err := b.dir.makeWorkspace(); err != nil {
			return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		workspace = b.dir.workspace
	}
	if err := set.resolveUser(workspace, p.hard); err != nil {
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	if set.cache != cacheNone {
		scope := set.cache
		if b.dir.workspace != "" {
			// A workspace made for this sandbox goes with it, and
			// nothing could find its cache again.
			scope = cacheSandbox
		}
		if b.cache, err = makeCacheVolume(ctx, cli, workspace, scope, id); err != nil {
			return plugin.Provisioned{}, err
		}
	}
	token, err := b.dir.writeToken()
	if err == nil {
		err = b.dir.handTo(set.uid, set.gid)
	}
	if err != nil {
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	if b.fwd, err = loopback.New(loopback.Unix(b.dir.run + "/" + socketName)); err != nil {
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	endpoint := "http://" + b.fwd.Addr() + mcpready.Path
	details := img.details()
	if set.metrics {
		if b.metrics, err = loopback.New(loopback.Unix(b.dir.run + "/" + metricsSocketName)); err != nil {
			return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		details["metrics"] = "http://" + b.metrics.Addr() + "/metrics"
	}
	cs := codegenSpec{sandboxID: id, name: spec.Name, set: set, dir: b.dir, workspace: workspace, hard: p.hard, cache: b.cache}
	if collector := tracing.ExportURL(p.getenv); collector != "" {
		if b.relay, err = tracing.NewRelay(b.dir.run+"/"+otlpSocketName, collector); err != nil {
			return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
		}
		cs.traces, cs.traceEnv = true, tracing.ContextEnv(ctx)
	}
	b.ctr, err = startCodegen(ctx, cli, cs)
	if err != nil {
		return plugin.Provisioned{}, err
	}
	if err := mcpready.Wait(ctx, CodegenMode, endpoint, token, b.ctr); err != nil {
		return plugin.Provisioned{}, err
	}
	b.info = plugin.Provisioned{
		ID: id, Name: spec.Name, Mode: CodegenMode, Endpoint: endpoint, Token: token, Workspace: workspace, Created: time.Now(),
		Details: details,
	}
	maps.Copy(details, map[string]string{
		"container": b.ctr.id, "dir": b.dir.dir, "network": set.network,
		"user":         strconv.Itoa(set.uid) + ":" + strconv.Itoa(set.gid),
		"idle_timeout": set.idle.String(),
		"workspace_by": map[bool]string{true: "provider", false: "user"}[b.dir.workspace != ""],
		"cache":        cacheNone,
	})
	if b.cache != nil {
		details["cache"], details["cache_volume"] = b.cache.scope, b.cache.name
	}
	if err := p.boxes.Add(b); err != nil {
		return plugin.Provisioned{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	ok = true
	return b.info, nil
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
		b.relay.Close()
	}
	if b.ctr != nil {
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
	return err
}

// Purge makes a box a provision.Purger: a Release with Purge removes the
// workspace's cache volume too, after the teardown has removed the
// container that mounted it.
func (b *codegenBox) Purge(ctx context.Context) error {
	if b.cache == nil || b.cache.scope != cacheWorkspace {
		return nil
	}
	return b.cache.remove(ctx)
}

// Info, IdleSince and IdleTimeout make a box a provision.Box.
func (b *codegenBox) Info() plugin.Provisioned           { return b.info }
func (b *codegenBox) IdleSince() time.Time               { return b.fwd.IdleSince() }
func (b *codegenBox) IdleTimeout() time.Duration         { return b.idle }
func (b *codegenBox) Teardown(ctx context.Context) error { return b.teardown(ctx) }

// Dead makes a box a provision.Mortal: its container may exit by itself.
func (b *codegenBox) Dead() string { return b.ctr.dead() }

// Release removes the sandbox's container and private directory, and
// its cache volume unless that is kept for the workspace (`cache:
// workspace`) and opts.Purge is false.
func (p *CodegenProvider) Release(ctx context.Context, id string, opts plugin.ReleaseOptions) error {
	return p.boxes.Release(ctx, id, opts)
}

// List returns the sandboxes held, without their tokens.
func (p *CodegenProvider) List(context.Context) ([]plugin.Provisioned, error) {
	return p.boxes.List(), nil
}

// Close releases every sandbox, concurrently: the plugin is stopping, and
// nothing it started may outlive it.
func (p *CodegenProvider) Close() error {
	p.mu.Lock()
	p.closed = true
	cli := p.cli
	p.mu.Unlock()
	err := p.boxes.Close()
	if cli != nil {
		err = errors.Join(err, cli.Close())
	}
	return err
}
