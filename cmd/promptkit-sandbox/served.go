package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A serve offers the sandboxes of one config to exec over the relay
// (relayserve.go), and as the modes of the plugin service, each mode
// named CONFIG#SANDBOX: CONFIG the config file's absolute,
// symlink-resolved path, so that a client of another config cannot open
// one by its name.
const modeSep = "#"

func servedMode(cfg, name string) string { return cfg + modeSep + name }

// canonicalConfig is the path a serve and an exec compare: absolute, with
// every symlink resolved, so two spellings of one file agree. A missing
// file is an error here, as config loading would make it.
func canonicalConfig(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// lentSandboxes are the sandboxes of rt (direct included) a serve lends
// to exec calls, by name, each counting its calls in m (nil: not
// counted), and their names in order.
func lentSandboxes(rt *hooks.Runtime, m *metrics.Collector) (map[string]sandbox.Sandbox, []string) {
	names := []string{direct.ModeName}
	for _, s := range rt.File().Sandboxes {
		if s.Name != direct.ModeName {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	out := make(map[string]sandbox.Sandbox, len(names))
	for _, name := range names {
		if sb, ok := rt.Sandbox(name); ok {
			out[name] = lent{sb, m}
		}
	}
	return out, names
}

// servedModes are the factories of a serve's plugin service: one per
// lent sandbox, each lending it to whoever opens its mode.
func servedModes(lent map[string]sandbox.Sandbox, cfg string) map[string]sandbox.Factory {
	modes := make(map[string]sandbox.Factory, len(lent))
	for name, sb := range lent {
		modes[servedMode(cfg, name)] = func(context.Context, string, map[string]any) (sandbox.Sandbox, error) { return sb, nil }
	}
	return modes
}

// lent is a sandbox serve opened once and lends to every exec call. An
// exec's Close (or a dropped handle) must not close it: serve closes it
// when it stops. Its output cap is the sandbox's own, so the exec side
// keeps as much as the sandbox would have.
type lent struct {
	sb sandbox.Sandbox
	m  *metrics.Collector
}

func (l lent) Name() string { return l.sb.Name() }
func (l lent) Close() error { return nil }
func (l lent) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	start := time.Now()
	resp, err := l.sb.Spawn(ctx, req)
	l.count(req, resp, err, start)
	return resp, err
}

// count records an exec call in the metrics. A serve is not told which
// hook an exec runs for: the hook label is the file name of the command
// exec runs, which stands for it in the usual one-command-per-hook
// setup. A clean exit whose stdout is a verdict denying is a denial; a
// clean exit with anything else on stdout (an observe hook's) is not.
func (l lent) count(req sandbox.Request, resp sandbox.Response, err error, start time.Time) {
	if l.m == nil {
		return
	}
	l.m.Call(l.sb.Name(), filepath.Base(req.Command), metrics.OutcomeOf(resp, err), time.Since(start))
}

// OutputLimit is the sandbox's cap; 0 (unknown) leaves the default.
func (l lent) OutputLimit() int {
	if ol, ok := l.sb.(plugin.OutputLimiter); ok {
		return ol.OutputLimit()
	}
	return 0
}

// SpawnStreaming passes output on as the sandbox gives it. What the hook writes goes to exec as it comes (within the plugin
// server's StreamDelay), not with the result: exec shows a long hook's
// progress, and should this serve be stopped mid-call, exec passes on what
// it received.
func (l lent) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	if l.m == nil {
		return sandbox.SpawnTo(ctx, l.sb, req, stdout, stderr)
	}
	// A streamed stdout is not kept in the response: the start of it is
	// kept here, to read a verdict from.
	peek := &verdictPeek{}
	start := time.Now()
	resp, err := sandbox.SpawnTo(ctx, l.sb, req, io.MultiWriter(stdout, peek), stderr)
	counted := resp
	if !peek.over {
		counted.Stdout = peek.buf
	}
	l.count(req, counted, err, start)
	return resp, err
}

// maxVerdictPeek is how much of a streamed stdout is kept to read a
// verdict from: far more than a verdict takes. Past it the call counts
// as allowed, its verdict unread.
const maxVerdictPeek = 1 << 20

// verdictPeek keeps the first maxVerdictPeek bytes written to it.
type verdictPeek struct {
	buf  []byte
	over bool
}

func (p *verdictPeek) Write(b []byte) (int, error) {
	if len(p.buf)+len(b) > maxVerdictPeek {
		p.over, p.buf = true, nil
	}
	if !p.over {
		p.buf = append(p.buf, b...)
	}
	return len(b), nil
}
