package promptkit

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// handle is what PromptKit gets from a factory: a reference to a shared
// sandbox. Every load gets its own handle, so closing one (PromptKit
// never does; an embedder may) releases only that load's reference.
type handle struct {
	a      *Adapter
	e      *entry
	name   string
	closed atomic.Bool
}

var (
	_ pksandbox.Sandbox = (*handle)(nil)
	_ pksandbox.Closer  = (*handle)(nil)
)

func (h *handle) Name() string { return h.name }

// Spawn runs the hook's process in the shared sandbox. The error is
// promptkit-sandbox's typed error (errors.Is sandbox.ErrTimeout,
// errors.As *sandbox.ExitError, ...) and Response.Err repeats it, as
// PromptKit's hooks read either. A span in ctx goes on to the plugin
// that runs the call (see shared/tracing).
func (h *handle) Spawn(ctx context.Context, req pksandbox.Request) (pksandbox.Response, error) {
	ctx, done, ok := h.a.enter(ctx)
	if !ok || h.closed.Load() {
		if ok {
			done()
		}
		err := sandbox.NewError(sandbox.KindStart, "sandbox "+h.name+": "+ErrClosed.Error(), ErrClosed)
		return pksandbox.Response{Err: err}, err
	}
	defer done()
	cmd := req.Command
	if h.e.direct && isRelativePath(cmd) {
		cmd = filepath.Join(h.a.baseDir, cmd)
	}
	h.a.stats.spawns.Add(1)
	start := time.Now()
	resp, err := h.e.sb.Spawn(ctx, sandbox.Request{
		Command: cmd,
		Args:    req.Args,
		Env:     req.Env,
		Stdin:   req.Stdin,
		Timeout: req.Timeout,
	})
	h.a.opts.Metrics.Call(h.name, filepath.Base(req.Command), metrics.OutcomeOf(resp, err), time.Since(start))
	if resp.StdoutTruncated {
		h.a.stats.stdoutCut.Add(1)
		h.a.log.Warn("hook output truncated at the sandbox's output limit; PromptKit reads what was kept",
			"sandbox", h.name, "command", req.Command, "stream", "stdout", "kept_bytes", len(resp.Stdout))
	}
	if resp.StderrTruncated {
		h.a.stats.stderrCut.Add(1)
		h.a.log.Warn("hook output truncated at the sandbox's output limit; PromptKit reads what was kept",
			"sandbox", h.name, "command", req.Command, "stream", "stderr", "kept_bytes", len(resp.Stderr))
	}
	return pksandbox.Response{Stdout: resp.Stdout, Stderr: resp.Stderr, Err: err}, err
}

// Close releases this handle's reference to the shared sandbox.
func (h *handle) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	h.a.release(h.e)
	return nil
}

// isRelativePath reports a command that names a file relative to the
// working directory ("./hook", "hooks/pii.py"), as opposed to an absolute
// path or a bare name looked up in PATH.
func isRelativePath(cmd string) bool {
	return cmd != "" && !filepath.IsAbs(cmd) && strings.ContainsRune(cmd, filepath.Separator)
}
