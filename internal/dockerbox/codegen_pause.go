package dockerbox

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
	"github.com/altairalabs/promptkit-sandbox/internal/mcpready"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// A paused docker_codegen sandbox is a frozen container (the engine's
// cgroup freezer: no CPU, its memory and files kept, background shells
// included); its ports answer every request with 409 and why (as the
// call's JSON-RPC error, see mcpready.Refusal), instead of hanging on a
// sandboxd that cannot answer.

var _ provision.Sleeper = (*codegenBox)(nil)

// Pause freezes the sandbox's container; its ports refuse from now on.
func (b *codegenBox) Pause(ctx context.Context) error {
	b.refuse(mcpready.Refusal(fmt.Sprintf(
		"codegen sandbox %s is paused: resume it (promptkit-sandbox codegen resume %s) before calling it", b.info.ID, b.info.ID)))
	if b.paused.Load() {
		return nil // paused while idle: now until Resume
	}
	if err := b.ctr.freeze(ctx); err != nil {
		b.serve()
		return err
	}
	b.paused.Store(true)
	return nil
}

// Resume thaws the container and opens its ports again.
func (b *codegenBox) Resume(ctx context.Context) error {
	if err := b.ctr.thaw(ctx); err != nil {
		return err
	}
	b.paused.Store(false)
	b.serve()
	return nil
}

// SleepsWhenIdle is on_idle: pause.
func (b *codegenBox) SleepsWhenIdle() bool { return b.sleepIdle }

// Sleep freezes the container of a sandbox nothing is connected to; its
// next MCP request thaws it and then goes through (its metrics port
// refuses meanwhile: a scrape is not a use).
func (b *codegenBox) Sleep(ctx context.Context) error {
	if b.metrics != nil {
		b.metrics.Refuse(mcpready.Refusal(fmt.Sprintf("codegen sandbox %s is paused while idle: its next MCP call resumes it", b.info.ID)))
	}
	b.fwd.Sleep(b.wake, func(err error) loopback.Answer {
		return mcpready.Refusal(fmt.Sprintf("codegen sandbox %s was paused while idle and could not be resumed: %v", b.info.ID, err))
	})
	if err := b.ctr.freeze(ctx); err != nil {
		b.serve()
		return err
	}
	b.paused.Store(true)
	return nil
}

// wake thaws a sandbox paused while idle, for the request that woke it.
func (b *codegenBox) wake() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := b.ctr.thaw(ctx); err != nil {
		return err
	}
	b.paused.Store(false)
	if b.metrics != nil {
		b.metrics.Serve()
	}
	return nil
}

// Paused reports whether the container is frozen.
func (b *codegenBox) Paused() bool { return b.paused.Load() }

func (b *codegenBox) refuse(answer loopback.Answer) {
	for _, f := range []*loopback.Forwarder{b.fwd, b.metrics} {
		if f != nil {
			f.Refuse(answer)
		}
	}
}

func (b *codegenBox) serve() {
	for _, f := range []*loopback.Forwarder{b.fwd, b.metrics} {
		if f != nil {
			f.Serve()
		}
	}
}

// thaw unpauses a paused container before its teardown kills it.
func (b *codegenBox) thaw(ctx context.Context) {
	if b.paused.Load() && b.ctr != nil {
		_ = b.ctr.thaw(ctx)
	}
}

// freeze pauses the container's processes (the engine's cgroup freezer).
func (c *codegenContainer) freeze(ctx context.Context) error {
	if _, err := c.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("%s: pause container %s: %w", CodegenMode, c.id, err)
	}
	return nil
}

// thaw unpauses the container's processes.
func (c *codegenContainer) thaw(ctx context.Context) error {
	if _, err := c.cli.ContainerUnpause(ctx, c.id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("%s: unpause container %s: %w", CodegenMode, c.id, err)
	}
	return nil
}

// Pause pauses the sandbox id (see codegenBox.Pause).
func (p *CodegenProvider) Pause(ctx context.Context, id string) error { return p.boxes.Pause(ctx, id) }

// Resume resumes the sandbox id.
func (p *CodegenProvider) Resume(ctx context.Context, id string) error {
	return p.boxes.Resume(ctx, id)
}
