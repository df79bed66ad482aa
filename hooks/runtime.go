// Package hooks is the exec-hook runtime: it loads a RuntimeConfig, opens
// the sandboxes it declares and runs its hooks through them with
// PromptKit's wire protocol — filter hooks synchronously and fail-closed,
// observe hooks in the background with bounded concurrency.
//
// Hooks get secrets through env: a bare name forwards this process's
// value, KEY=value sets one, and a sandbox's own env list (docker_run,
// docker_exec, kubectl_exec), which the sandbox reports through
// sandbox.EnvForwarder, adds to both. Whatever the runtime quotes of
// a hook — stderr in a deny reason or the observe-failure log, stdout in
// an invalid-verdict reason, its sandbox's error, its deny reason in the
// debug log — goes through shared/scrub, which redacts the values of
// those variables (also base64- and URL-encoded; values under 4 bytes are
// skipped, as everywhere in scrub, so LOG_LEVEL=info does redact "info")
// and scrub's known credential formats. Output is scrubbed before it is
// cut to 1 KiB, so the cut never half-shows a secret, and a secret that
// the output limit cut short is redacted from its start. Not covered: the
// rest of the environment a hook inherits, other transformations of a
// value, secrets in no known format, and a verdict's reason and metadata,
// which reach the caller as the hook wrote them, as in PromptKit.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Options tune a Runtime. The zero value is usable.
type Options struct {
	// Registry serves the sandbox modes a config may use. The built-in
	// "direct" mode is always available, whether or not it is registered.
	Registry *sandbox.Registry
	// Logger receives observe-hook failures and lifecycle messages; nil
	// discards them.
	Logger hclog.Logger
	// ObserveConcurrency bounds how many observe hooks run at once
	// (default 4). ObserveQueue bounds how many more may wait (default
	// 256); past that an observer is dropped and the drop is logged, so a
	// flood of events can never delay the caller or grow memory without
	// bound.
	ObserveConcurrency int
	ObserveQueue       int
	// LookupEnv resolves ${VAR} in sandbox config (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Plugins, when set, serves the modes that are not built in (see
	// PluginsFunc); nil means only built-in modes exist. The runtime owns
	// what it returns and closes it on Close.
	Plugins PluginsFunc
	// Metrics, when set, counts every hook call by sandbox and hook (see
	// package hooks/metrics); the embedding program registers it where
	// it scrapes. Nil counts nothing.
	Metrics *metrics.Collector
	// TracerProvider, when set, makes a span of every hook call, a child
	// of the span in the caller's context; a plugin sandbox carries it
	// on to the plugin (see shared/tracing). Nil makes no spans.
	TracerProvider trace.TracerProvider
}

// Runtime runs the hooks of one RuntimeConfig. It is safe for concurrent
// use. Close it to wait for observers and release sandboxes.
type Runtime struct {
	file      *config.File
	log       hclog.Logger
	plugins   Plugins
	sandboxes map[string]sandbox.Sandbox
	hooks     []*Hook
	byName    map[string]*Hook
	observers *observerPool
	telemetry telemetry
}

// Hook is one configured exec hook bound to its sandbox.
type Hook struct {
	config.Hook
	sandbox sandbox.Sandbox
	// forwarded lists the env entries the hook's process gets from the
	// config: its sandbox's (as the sandbox reports them), then its own,
	// which win.
	forwarded []string
}

// SandboxName is the name of the sandbox the hook runs in.
func (h *Hook) SandboxName() string { return h.sandbox.Name() }

// Load reads a RuntimeConfig and opens every sandbox it declares. Any
// problem — in the YAML, in a hook entry, or reported by a sandbox factory
// or plugin for its config — is returned as a *config.Error listing them
// all.
func Load(path string, opts Options) (*Runtime, error) {
	builtin := withDirect(opts.Registry)
	copts := config.Options{Modes: builtin, LookupEnv: opts.LookupEnv}
	var plugins Plugins
	if opts.Plugins != nil {
		copts.ModesFor = func(dirs []string) (config.ModeSet, error) {
			p, err := opts.Plugins(path, dirs)
			if err != nil {
				return nil, err
			}
			plugins = p
			return modeSet{builtin: builtin, plugins: p}, nil
		}
	}
	file, err := config.Load(path, copts)
	if err != nil {
		if plugins != nil {
			_ = plugins.Close()
		}
		return nil, err
	}
	return open(file, opts, builtin, plugins)
}

// New opens the sandboxes of an already-loaded config and binds its hooks.
func New(file *config.File, opts Options) (*Runtime, error) {
	builtin := withDirect(opts.Registry)
	var plugins Plugins
	if opts.Plugins != nil {
		p, err := opts.Plugins(file.Path, file.PluginDirs)
		if err != nil {
			return nil, err
		}
		plugins = p
	}
	return open(file, opts, builtin, plugins)
}

func open(file *config.File, opts Options, builtin *sandbox.Registry, plugins Plugins) (*Runtime, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	rt := &Runtime{
		file:      file,
		log:       log,
		plugins:   plugins,
		sandboxes: make(map[string]sandbox.Sandbox, len(file.Sandboxes)+1),
		byName:    make(map[string]*Hook, len(file.Hooks)),
		telemetry: newTelemetry(opts.Metrics, opts.TracerProvider),
	}
	var problems []config.Problem
	opened, errs := rt.openSandboxes(builtin, file.Sandboxes)
	for i, s := range file.Sandboxes {
		if err := errs[i]; err != nil {
			pr := file.SandboxProblem(s, err.Error())
			pr.Err = err
			problems = append(problems, pr)
			continue
		}
		rt.sandboxes[s.Name] = opened[i]
	}
	if len(problems) > 0 {
		_ = rt.release()
		return nil, &config.Error{Problems: problems}
	}
	if _, ok := rt.sandboxes[direct.ModeName]; !ok {
		rt.sandboxes[direct.ModeName] = direct.New(direct.ModeName, shell.Options{})
	}
	for _, h := range file.Hooks {
		name := h.Sandbox
		if name == "" {
			name = direct.ModeName
		}
		sb, ok := rt.sandboxes[name]
		if !ok {
			// config.Load has already rejected undeclared sandboxes; a
			// hand-built File may not have been checked.
			_ = rt.release()
			return nil, fmt.Errorf("hook %q: sandbox %q is not declared", h.Name, name)
		}
		hook := &Hook{Hook: h, sandbox: sb, forwarded: slices.Concat(forwardedEnv(sb), h.Env)}
		rt.hooks = append(rt.hooks, hook)
		rt.byName[h.Name] = hook
		opts.Metrics.Hook(name, h.Name)
	}
	rt.observers = newObserverPool(log, rt.telemetry, opts.ObserveConcurrency, opts.ObserveQueue)
	return rt, nil
}

// File is the config the runtime was built from.
func (rt *Runtime) File() *config.File { return rt.file }

// Plugins is what serves the runtime's plugin modes (nil when the
// runtime has none): promptkit-sandbox serve hands provider modes to it.
func (rt *Runtime) Plugins() Plugins { return rt.plugins }

// Hooks returns the configured hooks in the order they were written.
func (rt *Runtime) Hooks() []*Hook { return rt.hooks }

// Hook returns the hook called name.
func (rt *Runtime) Hook(name string) (*Hook, bool) {
	h, ok := rt.byName[name]
	return h, ok
}

// Sandbox returns the opened sandbox called name ("direct" always exists).
func (rt *Runtime) Sandbox(name string) (sandbox.Sandbox, bool) {
	sb, ok := rt.sandboxes[name]
	return sb, ok
}

// Run fires every hook registered for p's hook type and phase, in the order
// they were written. Filter hooks run one after another and the first deny
// ends the run with its decision; observe hooks are handed to the
// background and never delay the result.
func (rt *Runtime) Run(ctx context.Context, p *wire.Payload) (Decision, error) {
	stdin, err := p.Stdin()
	if err != nil {
		return Decision{}, err
	}
	for _, h := range rt.hooks {
		if !h.fires(p.Hook, p.Phase) {
			continue
		}
		if h.Mode == config.ModeObserve {
			rt.observers.submit(ctx, h, stdin)
			continue
		}
		if d := rt.filter(ctx, h, stdin); !d.Allow {
			return d, nil
		}
	}
	return Allow, nil
}

// Call fires the one hook called name on p. An observe hook is handed to
// the background and Call returns Allow at once.
func (rt *Runtime) Call(ctx context.Context, name string, p *wire.Payload) (Decision, error) {
	h, ok := rt.byName[name]
	if !ok {
		return Decision{}, &UnknownHookError{Name: name, Known: rt.hookNames()}
	}
	if h.Type != p.Hook {
		return Decision{}, fmt.Errorf("hook %q is a %s hook, not %s", name, h.Type, p.Hook)
	}
	if p.Hook != wire.HookEval && !h.hasPhase(p.Phase) {
		return Decision{}, fmt.Errorf("hook %q does not run on phase %q (its phases: %s)", name, p.Phase, strings.Join(h.Phases, ", "))
	}
	stdin, err := p.Stdin()
	if err != nil {
		return Decision{}, err
	}
	if h.Mode == config.ModeObserve {
		rt.observers.submit(ctx, h, stdin)
		return Allow, nil
	}
	return rt.filter(ctx, h, stdin), nil
}

func (rt *Runtime) filter(ctx context.Context, h *Hook, stdin []byte) Decision {
	ctx, call := rt.telemetry.start(ctx, h)
	resp, err := h.spawn(ctx, stdin)
	d, logged, outcome := decide(h.Name, resp, err, h.scrubber())
	call.end(outcome)
	if !d.Allow {
		rt.log.Debug("filter hook denied", "hook", h.Name, "reason", logged)
	}
	return d
}

func (h *Hook) spawn(ctx context.Context, stdin []byte) (sandbox.Response, error) {
	// The call's deadline is set here, once; the sandbox enforces it, and
	// the runtime waits sandbox.Grace past it for the sandbox's report.
	ctx, cancel := sandbox.Enter(ctx, h.Timeout)
	defer cancel()
	return h.sandbox.Spawn(ctx, sandbox.Request{
		Command: h.Command,
		Args:    h.Args,
		Env:     h.Env,
		Stdin:   stdin,
		Timeout: h.Timeout,
	})
}

// scrubber redacts the values of the variables the hook's process is
// given by the config (bare names resolved from this process's
// environment now, as the sandbox resolves them at spawn) and the
// credential formats scrub knows.
func (h *Hook) scrubber() *scrub.Scrubber {
	env := shell.MergeEnv(nil, h.forwarded, os.LookupEnv)
	secrets := make(map[string]string, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		secrets[name] = value
	}
	return scrub.New(secrets)
}

// forwardedEnv is what sb says it sets in every process it runs (the
// env of docker_run, docker_exec and kubectl_exec, reported across the
// plugin protocol): its values are the hook's secrets as much as the
// hook's own env. How a sandbox is configured is its own business.
func forwardedEnv(sb sandbox.Sandbox) []string {
	if ef, ok := sb.(sandbox.EnvForwarder); ok {
		return ef.ForwardedEnv()
	}
	return nil
}

func (h *Hook) fires(hook, phase string) bool {
	if h.Type != hook {
		return false
	}
	return hook == wire.HookEval || h.hasPhase(phase)
}

func (h *Hook) hasPhase(phase string) bool {
	for _, p := range h.Phases {
		if p == phase {
			return true
		}
	}
	return false
}

func (rt *Runtime) hookNames() []string {
	names := make([]string, len(rt.hooks))
	for i, h := range rt.hooks {
		names[i] = h.Name
	}
	return names
}

// Close waits for running and queued observe hooks until ctx is done, then
// cancels whatever is left (its sandbox kills the processes) and closes the
// sandboxes that hold resources. The error reports observers that had to be
// cancelled and sandboxes that failed to close.
func (rt *Runtime) Close(ctx context.Context) error {
	err := rt.observers.close(ctx)
	return errors.Join(err, rt.release())
}

// openSandbox opens a declared sandbox: built-in modes through the
// registry, the rest through the plugins; either way within the entry's
// open_timeout.
func (rt *Runtime) openSandbox(builtin *sandbox.Registry, s config.Sandbox) (sandbox.Sandbox, error) {
	if builtin.Serves(s.Mode) || rt.plugins == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.OpenBound())
		defer cancel()
		return builtin.Open(ctx, s.Name, s.Mode, s.Config)
	}
	return rt.plugins.Open(s)
}

// openConcurrency bounds how many sandboxes of one config open at once.
const openConcurrency = 8

// openSandboxes opens every sandbox of a config side by side, so that
// what they wait on together — an engine that does not answer, a plugin
// slow to start — costs one open timeout, not one per sandbox. The
// results are in the order of sandboxes.
func (rt *Runtime) openSandboxes(builtin *sandbox.Registry, sandboxes []config.Sandbox) ([]sandbox.Sandbox, []error) {
	opened := make([]sandbox.Sandbox, len(sandboxes))
	errs := make([]error, len(sandboxes))
	slots := make(chan struct{}, openConcurrency)
	var wg sync.WaitGroup
	for i, s := range sandboxes {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			opened[i], errs[i] = rt.openSandbox(builtin, s)
		}()
	}
	wg.Wait()
	return opened, errs
}

// release closes the sandboxes, then the plugins that serve them.
func (rt *Runtime) release() error {
	err := rt.closeSandboxes()
	if rt.plugins != nil {
		err = errors.Join(err, rt.plugins.Close())
	}
	return err
}

// closeSandboxes closes the sandboxes side by side: each close is
// bounded, but a backend that does not answer should cost one bound, not
// one per sandbox.
func (rt *Runtime) closeSandboxes() error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for name, sb := range rt.sandboxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sandbox.Close(sb); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("close sandbox %q: %w", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// UnknownHookError names a hook the config does not declare.
type UnknownHookError struct {
	Name  string
	Known []string
}

func (e *UnknownHookError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("no hook named %q in the config (hooks: %s)", e.Name, known)
}
