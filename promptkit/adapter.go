package promptkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
)

// Options configure an Adapter. The zero value searches the default
// plugin directories, enforces a lock file only if one lies in the
// working directory, and logs warnings to stderr.
type Options struct {
	// PluginDirs, when non-empty, replace the default plugin search path
	// ($PROMPTKIT_PLUGIN_PATH, then the user's and the program's plugin
	// directories; see docs/plugins.md), as the CLI's --plugin-dir does.
	PluginDirs []string
	// LockFile is the lock file to enforce: a plugin whose SHA-256
	// differs from the one recorded is refused before it runs. Empty
	// means BaseDir's promptkit-sandbox.lock, if it exists.
	LockFile string
	// BaseDir is what relative paths in a sandbox entry resolve against
	// (mounts, kubeconfig, kubectl_path, docker_path, and the command of
	// a hook in a direct sandbox when ReplaceDirect is set). Empty means
	// the working directory when New runs.
	BaseDir string
	// ReplaceDirect makes Register replace PromptKit's direct mode with
	// promptkit-sandbox's.
	ReplaceDirect bool
	// Logger receives the adapter's warnings (truncated output) and,
	// named for each plugin, the plugins' own logs. Nil logs at info
	// level to stderr.
	Logger hclog.Logger
	// LookupEnv resolves ${NAME} in sandbox entries (default
	// os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// PluginStartTimeout bounds a plugin's start and handshake
	// (host.DefaultStartTimeout when zero).
	PluginStartTimeout time.Duration
	// Metrics, when set, counts every hook process run, by sandbox and
	// by the file name of its command (PromptKit does not tell a sandbox
	// which hook it runs for), and plugin processes restarted after a
	// crash; register it in the Prometheus registry you scrape. See
	// docs/operations.md. Nil counts nothing.
	Metrics *metrics.Collector
}

// Adapter serves promptkit-sandbox's sandboxes to PromptKit. It is safe
// for concurrent use. Close it when the program is done with PromptKit.
type Adapter struct {
	opts    Options
	baseDir string
	log     hclog.Logger
	host    *host.Host

	mu      sync.Mutex
	entries map[string]*entry // open sandboxes, by key (see entryKey)
	// decls are the provider-mode sandboxes PromptKit loaded, by name
	// (the latest load wins); codegens the codegen sandboxes provisioned
	// and not yet closed.
	decls    map[string]config.Sandbox
	codegens map[*CodegenSandbox]struct{}
	closed   bool
	calls    sync.WaitGroup // Spawns in flight, counted under mu

	// closing ends when Close begins: every call in flight is cancelled
	// with ErrClosed as the cause.
	closing context.Context
	cancel  context.CancelCauseFunc

	stats counters
	// lastCodegenErr is the latest failed resolve (LastCodegenError).
	lastCodegenErr atomic.Pointer[error]
}

// New finds the plugins and reads the lock file. It starts no plugin:
// each starts when a sandbox first needs it (Modes asks the plugins it
// has not seen before what they serve).
func New(opts Options) (*Adapter, error) {
	base := opts.BaseDir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("promptkit adapter: base directory: %w", err)
		}
		base = wd
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, fmt.Errorf("promptkit adapter: base directory: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{Name: "promptkit-sandbox", Level: hclog.Info, Output: os.Stderr})
	}
	lock := opts.LockFile
	if lock == "" {
		lock = lockfile.Path(base)
	}
	h, err := host.New(host.WithEnv(host.Options{
		Dirs:         opts.PluginDirs,
		LockPath:     lock,
		Logger:       log,
		StartTimeout: opts.PluginStartTimeout,
		Metrics:      opts.Metrics,
	}))
	if err != nil {
		return nil, fmt.Errorf("promptkit adapter: %w", err)
	}
	closing, cancel := context.WithCancelCause(context.Background())
	return &Adapter{
		opts:    opts,
		baseDir: base,
		log:     log,
		host:    h,
		entries: make(map[string]*entry),
		closing: closing,
		cancel:  cancel,
	}, nil
}

// ErrClosed is returned by a sandbox, factory or Register of an adapter
// that has been closed.
var ErrClosed = errors.New("promptkit-sandbox adapter is closed")

// Close cancels the calls in flight, then releases every sandbox the
// adapter opened — warm containers, residents, connections — and stops
// the plugin processes. A cancelled call's sandbox kills what it started,
// as on any cancellation, and the call returns an error that matches
// context.Canceled and sandbox.ErrCanceled and wraps ErrClosed (or a
// transport error, for a plugin that went first). Close waits for them
// at most callsGrace. Sandboxes PromptKit still holds fail with ErrClosed
// from then on. Close is idempotent.
func (a *Adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	entries := make([]*entry, 0, len(a.entries))
	for _, e := range a.entries {
		entries = append(entries, e)
	}
	a.entries = nil
	codegens := make([]*CodegenSandbox, 0, len(a.codegens))
	for s := range a.codegens {
		codegens = append(codegens, s)
	}
	a.mu.Unlock()

	a.cancel(ErrClosed)
	ended := make(chan struct{})
	go func() { a.calls.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(callsGrace):
		// A backend that does not end a cancelled call: closing the
		// sandboxes and plugins below ends it from their side.
		a.log.Warn("calls in flight did not end within the grace after Close cancelled them; closing their sandboxes", "grace", callsGrace)
	}

	var errs []error
	for _, e := range entries {
		errs = append(errs, e.close())
	}
	errs = append(errs, closeCodegens(codegens))
	errs = append(errs, a.host.Close())
	return errors.Join(errs...)
}

// callsGrace bounds how long Close waits for cancelled calls to end. A
// local backend kills the call's process group at once; a plugin's call
// ends within sandbox.Grace of the cancel even if the plugin is stuck.
const callsGrace = 5 * time.Second

// enter counts a call in flight and returns its context, which Close
// cancels; false once the adapter is closed. done ends the call.
func (a *Adapter) enter(ctx context.Context) (_ context.Context, done func(), ok bool) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, nil, false
	}
	a.calls.Add(1)
	a.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(a.closing, func() { cancel(context.Cause(a.closing)) })
	return ctx, func() {
		stop()
		cancel(nil)
		a.calls.Done()
	}, true
}

func (a *Adapter) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// Stats count what the adapter did since New.
type Stats struct {
	// Sandboxes is how many sandboxes are open now.
	Sandboxes int
	// Opened counts sandboxes opened; Reused counts factory calls that
	// were served a sandbox already open for the same entry.
	Opened, Reused uint64
	// Codegens counts codegen sandboxes provisioned.
	Codegens uint64
	// Spawns counts hook processes run.
	Spawns uint64
	// StdoutTruncated and StderrTruncated count calls whose stream passed
	// the sandbox's output limit and was cut (each is also logged).
	StdoutTruncated, StderrTruncated uint64
}

type counters struct {
	opened, reused, codegens, spawns, stdoutCut, stderrCut atomic.Uint64
}

// Stats returns the adapter's counters.
func (a *Adapter) Stats() Stats {
	a.mu.Lock()
	n := len(a.entries)
	a.mu.Unlock()
	return Stats{
		Sandboxes:       n,
		Opened:          a.stats.opened.Load(),
		Reused:          a.stats.reused.Load(),
		Codegens:        a.stats.codegens.Load(),
		Spawns:          a.stats.spawns.Load(),
		StdoutTruncated: a.stats.stdoutCut.Load(),
		StderrTruncated: a.stats.stderrCut.Load(),
	}
}
