// Package host runs sandbox backends that live in their own executables:
// it finds them on disk (plugin/discovery), checks them against the lock
// file (plugin/lockfile), starts each on first use, shares one process
// among every sandbox and call that needs it, restarts it after a crash,
// and stops them all on Close.
package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// DefaultStartTimeout bounds how long a plugin has to start and complete
// its handshake.
const DefaultStartTimeout = 10 * time.Second

// Options configure a Host. The zero value searches the default
// directories, enforces no lock file and logs nowhere.
type Options struct {
	// Dirs, when non-empty, replace every other search directory: the
	// CLI's repeatable --plugin-dir.
	Dirs []string
	// ConfigDirs are a RuntimeConfig's spec.plugins.dirs. They replace
	// the defaults when Dirs is empty.
	ConfigDirs []string
	// LockPath is the lock file to enforce. Empty, or a path where no
	// file exists, means no lock: any usable plugin may run.
	LockPath string
	// Env supplies the default search path's inputs; nil reads them from
	// the process (PROMPTKIT_PLUGIN_PATH, XDG_DATA_HOME, HOME, the working
	// directory, the executable's directory).
	Env *discovery.Env
	// Logger receives the host's messages and, named for each plugin,
	// the plugins' own logs at their own levels.
	Logger hclog.Logger
	// StartTimeout bounds a plugin's start and handshake
	// (DefaultStartTimeout when zero).
	StartTimeout time.Duration
	// CacheDir holds what plugins said they serve, across commands, so
	// that a command starts only the plugins it needs; DefaultCacheDir
	// when empty. NoCache turns the cache off: every plugin on the path
	// is started to ask.
	CacheDir string
	NoCache  bool
	// Reattach attaches to plugins that are already running instead of
	// starting them: the JSON a plugin prints when started with
	// PROMPTKIT_PLUGIN_DEBUG=1 (the value of PROMPTKIT_REATTACH_PLUGINS).
	Reattach string
	// Metrics, when set, counts the plugin processes started again after
	// a crash (see hooks/metrics); nil counts nothing.
	Metrics *metrics.Collector
}

// Host finds, starts and supervises plugin processes. It is safe for
// concurrent use.
type Host struct {
	opts     Options
	log      hclog.Logger
	scan     *discovery.Result
	lock     *lockfile.Lock
	reattach map[string]*goplugin.ReattachConfig

	cache describeCache

	mu        sync.Mutex
	instances map[string]*instance // by binary path, or "reattach:NAME"
	// provisioned maps the id of each sandbox provisioned through this
	// host to the plugin that holds it.
	provisioned map[string]*instance
	// undescribed holds, by path, why a plugin could not be asked which
	// modes it serves (see ModeHint).
	undescribed map[string]error
	closed      bool
}

// New scans the search path and reads the lock file. It starts nothing:
// plugins start when a sandbox first needs them.
func New(opts Options) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	env := opts.Env
	if env == nil {
		e, err := discovery.EnvFromOS()
		if err != nil {
			return nil, fmt.Errorf("plugin search path: %w", err)
		}
		env = &e
	}
	explicit := opts.Dirs
	if len(explicit) == 0 {
		explicit = opts.ConfigDirs
	}
	h := &Host{
		opts:      opts,
		log:       opts.Logger,
		instances: make(map[string]*instance),
	}
	if opts.LockPath != "" {
		var err error
		if h.lock, err = lockfile.Read(opts.LockPath); err != nil {
			return nil, err
		}
	}
	// A plugin another user owns runs only when the lock file vouches
	// for its content (its launch runs what it hashed), and only a lock
	// file no other user could have written may vouch: its pins are
	// enforced whoever owns it, but waive nothing otherwise.
	var pinned discovery.Pinned
	if h.lock != nil {
		if err := discovery.CheckTrusted(opts.LockPath); err != nil {
			h.log.Warn("the lock file's pins do not let plugins of other users run", "lock", opts.LockPath, "reason", err)
		} else {
			pinned = func(c discovery.Candidate) bool { return h.lock.Verify(c.Name, c.Version, c.Path) == nil }
		}
	}
	scan, err := discovery.ScanPinned(discovery.SearchDirs(explicit, *env), pinned)
	if err != nil {
		return nil, fmt.Errorf("scan plugin directories: %w", err)
	}
	h.scan = scan
	if !opts.NoCache {
		h.cache.dir = opts.CacheDir
		if h.cache.dir == "" {
			h.cache.dir = DefaultCacheDir()
		}
	}
	if opts.Reattach != "" {
		if h.reattach, err = plugin.ParseReattach(opts.Reattach); err != nil {
			return nil, fmt.Errorf("%s: %w", plugin.EnvReattach, err)
		}
	}
	return h, nil
}

// Dirs are the directories searched, in order.
func (h *Host) Dirs() []string { return h.scan.Dirs }

// Candidates are every plugin file found, usable or refused.
func (h *Host) Candidates() []discovery.Candidate { return h.scan.Candidates }

// Locked reports whether a lock file is being enforced.
func (h *Host) Locked() bool { return h.lock != nil }

// Close stops every plugin process: sandboxes still open are closed first
// so backends can release what they hold, then each process gets a short
// grace to exit before it is killed. Close is bounded and idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	insts := make([]*instance, 0, len(h.instances))
	for _, inst := range h.instances {
		insts = append(insts, inst)
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, len(insts))
	for i, inst := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = inst.stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// instanceFor returns the supervisor of one plugin binary, creating it (not
// starting it) on first request.
func (h *Host) instanceFor(c discovery.Candidate) (*instance, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	key := c.Path
	if inst, ok := h.instances[key]; ok {
		return inst, nil
	}
	inst := newInstance(h, c, nil)
	h.instances[key] = inst
	return inst, nil
}

// reattached returns the supervisor of a plugin named in Options.Reattach.
func (h *Host) reattached(name string) (*instance, bool, error) {
	rc, ok := h.reattach[name]
	if !ok {
		return nil, false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false, errClosed
	}
	key := "reattach:" + name
	if inst, ok := h.instances[key]; ok {
		return inst, true, nil
	}
	c := discovery.Candidate{Name: name, Path: fmt.Sprintf("(reattached, pid %d)", rc.Pid)}
	inst := newInstance(h, c, rc)
	h.instances[key] = inst
	return inst, true, nil
}

var errClosed = errors.New("plugin host is closed")

// names returns the plugin names found on disk or attached, sorted.
func (h *Host) names() []string {
	seen := map[string]bool{}
	for _, c := range h.scan.Candidates {
		if c.Usable() {
			seen[c.Name] = true
		}
	}
	for name := range h.reattach {
		seen[name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe starts the plugin in c (if it is not running) and returns what
// it says it serves.
func (h *Host) Describe(ctx context.Context, c discovery.Candidate) (plugin.Description, error) {
	if !c.Usable() {
		return plugin.Description{}, sandbox.NewError(sandbox.KindStart, "plugin "+c.Path+" is refused: "+c.Refused, nil)
	}
	inst, err := h.instanceFor(c)
	if err != nil {
		return plugin.Description{}, err
	}
	return inst.describe(ctx, false)
}

// Selected returns the plugins that serve a sandbox opened through this
// host, one entry per binary, sorted by name then version: what a lock
// file records.
func (h *Host) Selected() []discovery.Candidate {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []discovery.Candidate
	for _, inst := range h.instances {
		if inst.reattach == nil && inst.opened.Load() {
			out = append(out, inst.cand)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Version.LessThan(out[j].Version)
	})
	return out
}
