package kubecodegen

import (
	"context"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// A kubectl_codegen entry with `warm: N` keeps N sandboxes (Pod,
// Service, NetworkPolicy, Secret, Lease) created and answering MCP, so
// that a Provision hands one out at once (see warmpool.Entries for when
// the pool fills and refills). Pooled sandboxes keep their Leases like
// claimed ones, so a killed plugin's are reaped the same way. An entry
// with workspace_pvc starts cold: a claim of a ReadWriteOnce volume is
// one Pod's at a time.

// MaxWarm bounds `warm`: each pooled sandbox is a Pod holding its
// requests on a node while nobody uses it.
const MaxWarm = 16

// Values of a provisioned sandbox's "start" detail: StartWarm, or
// StartCold alone (the entry has no pool) or followed by ": " and why.
const (
	StartWarm = "warm"
	StartCold = "cold"
)

// pooledBox is a sandbox waiting in a pool.
type pooledBox struct{ *box }

// Discard deletes the sandbox's objects; the pool calls it off any
// call's path.
func (b pooledBox) Discard() {
	if err := b.teardown(context.Background()); err != nil {
		b.log.Warn("discarding a pooled sandbox", "id", b.info.ID, "error", err)
	}
}

func (p *Provider) prepare(name string, set settings) warmpool.Prepare[pooledBox] {
	return func(ctx context.Context) (pooledBox, error) {
		b, err := p.start(ctx, name, set)
		if err != nil {
			p.log.Debug("a pool refill failed", "sandbox", name, "error", err)
			return pooledBox{}, err
		}
		return pooledBox{b}, nil
	}
}

// prewarm starts filling the pool of an entry that has one.
func (p *Provider) prewarm(name string, cfg map[string]any, set settings) {
	if set.warm > 0 && set.workspacePVC == "" {
		p.pools.Prewarm(warmpool.EntryKey(name, cfg), set.warm, p.prepare(name, set))
	}
}

// claim hands out a pooled sandbox of spec's entry when one is ready,
// else starts one; start says which, and why cold when the entry has a
// pool.
func (p *Provider) claim(ctx context.Context, spec plugin.ProvisionSpec, set settings) (b *box, start string, err error) {
	var why string
	switch {
	case set.warm == 0:
		b, err = p.start(ctx, spec.Name, set)
		return b, StartCold, err
	case set.volume != "":
		why = "a workspace volume is mounted by one Pod at a time; pooled sandboxes have emptyDir workspaces"
	case set.workspacePVC != "":
		why = "a workspace_pvc is mounted by one Pod at a time; pooled sandboxes have emptyDir workspaces"
	default:
		var got pooledBox
		var ok bool
		if got, ok, why = p.pools.Claim(ctx, warmpool.EntryKey(spec.Name, spec.Config), set.warm, p.prepare(spec.Name, set)); ok {
			got.claimed = time.Now()
			got.info.Created = got.claimed
			return got.box, StartWarm, nil
		}
	}
	if b, err = p.start(ctx, spec.Name, set); err != nil {
		return nil, "", err
	}
	return b, StartCold + ": " + why, nil
}

// discard tears down a sandbox that was never handed out.
func (p *Provider) discard(b *box) {
	if err := b.teardown(context.Background()); err != nil {
		p.log.Warn("cleaning up a failed provision", "id", b.info.ID, "error", err)
	}
}
