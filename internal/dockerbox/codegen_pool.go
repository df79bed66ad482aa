package dockerbox

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// A docker_codegen entry with `warm: N` keeps N sandboxes started and
// answering MCP, each with a workspace the provider made, so that a
// Provision without a host workspace hands one out at once (see
// warmpool.Entries for when the pool fills and refills). A host
// workspace is bound into a container when it starts, so a Provision
// naming one always starts cold, and says so in the sandbox's details
// ("start").

// MaxCodegenWarm bounds `warm`: each pooled sandbox is a live container
// holding memory while nobody uses it.
const MaxCodegenWarm = 16

// Values of a provisioned sandbox's "start" detail: StartWarm, or
// StartCold alone (the entry has no pool) or followed by ": " and why.
const (
	StartWarm = "warm"
	StartCold = "cold"
)

// pooledBox is a sandbox waiting in a pool.
type pooledBox struct {
	*codegenBox
	log hclog.Logger
}

// Discard tears the sandbox down; the pool calls it off any call's path.
func (b *pooledBox) Discard() {
	if err := b.teardown(context.Background()); err != nil {
		b.log.Warn("codegen sandbox: discarding a pooled sandbox", "id", b.info.ID, "error", err)
	}
}

// Stale reports a pooled sandbox whose container has stopped.
func (b *pooledBox) Stale() bool { return b.ctr.dead() != "" }

// prepare is how a pool of the entry name with set makes a sandbox.
func (p *CodegenProvider) prepare(name string, set codegenSettings) warmpool.Prepare[*pooledBox] {
	return func(ctx context.Context) (*pooledBox, error) {
		b, err := p.start(ctx, name, set)
		if err != nil {
			p.log.Debug("codegen sandbox: a pool refill failed", "sandbox", name, "error", err)
			return nil, err
		}
		return &pooledBox{codegenBox: b, log: p.log}, nil
	}
}

// prewarm starts filling the pool of an entry that has one.
func (p *CodegenProvider) prewarm(name string, cfg map[string]any, set codegenSettings) {
	if set.warm > 0 && set.workspace == "" {
		p.pools.Prewarm(warmpool.EntryKey(name, cfg), set.warm, p.prepare(name, set))
	}
}

// claim hands out a pooled sandbox of spec's entry when one is ready,
// else starts one; start says which, and why cold when the entry has a
// pool.
func (p *CodegenProvider) claim(ctx context.Context, spec plugin.ProvisionSpec, set codegenSettings) (b *codegenBox, start string, err error) {
	var why string
	switch {
	case set.warm == 0:
		b, err = p.start(ctx, spec.Name, set)
		return b, StartCold, err
	case set.volume != "":
		why = "a workspace volume is mounted when the container starts; pooled sandboxes have workspaces of their own"
	case set.workspace != "":
		why = "a host workspace is bound when the container starts; pooled sandboxes have workspaces of their own"
	default:
		var got *pooledBox
		var ok bool
		if got, ok, why = p.pools.Claim(ctx, warmpool.EntryKey(spec.Name, spec.Config), set.warm, p.prepare(spec.Name, set)); ok {
			got.claimed = time.Now()
			got.info.Created = got.claimed
			return got.codegenBox, StartWarm, nil
		}
	}
	if b, err = p.start(ctx, spec.Name, set); err != nil {
		return nil, "", err
	}
	return b, StartCold + ": " + why, nil
}

// discard tears down a sandbox that was never handed out.
func (p *CodegenProvider) discard(b *codegenBox) {
	if err := b.teardown(context.Background()); err != nil {
		p.log.Warn("codegen sandbox: cleaning up a failed provision", "id", b.info.ID, "error", err)
	}
}
