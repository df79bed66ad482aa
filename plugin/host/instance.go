package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// instance supervises one plugin binary: at most one live process at a
// time, started on first use and again on the first use after it died.
// Every start bumps gen, so sandboxes opened on an earlier process know to
// open themselves again.
type instance struct {
	host     *Host
	cand     discovery.Candidate
	reattach *goplugin.ReattachConfig
	log      hclog.Logger

	mu      sync.Mutex
	proc    *process // nil when no process is running
	desc    *plugin.Description
	gen     int
	stopped bool
	// failed is why the plugin could not be started: one that fails to
	// start is not started again by this host (a command starts each
	// plugin at most once), and every use gets the same error at once.
	failed error
	// stderr keeps the last of what its processes wrote to stderr, to
	// quote when a start fails, at any log level.
	stderr *bounded.Tail

	// What the describe cache said of the file, looked up once (see
	// remembered), and the lock's refusal of it, if any.
	cacheOnce    sync.Once
	cached       cacheEntry
	cacheHit     bool
	cacheRefused error

	// opened records that a sandbox was opened in this plugin, so it is
	// one a lock file must record.
	opened atomic.Bool
}

func newInstance(h *Host, c discovery.Candidate, rc *goplugin.ReattachConfig) *instance {
	return &instance{host: h, cand: c, reattach: rc, log: h.log.Named(c.Name), stderr: &bounded.Tail{Max: stderrTail}}
}

// live returns the running process's client and generation, starting the
// process if there is none or the last one exited.
func (i *instance) live(ctx context.Context) (*plugin.Client, int, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return nil, 0, errClosed
	}
	if i.failed != nil {
		return nil, 0, i.failed
	}
	if i.proc != nil && !i.proc.client.Exited() {
		return i.proc.rpc, i.gen, nil
	}
	if i.proc != nil {
		i.log.Warn("plugin process exited; starting a new one", "path", i.cand.Path)
		i.proc.kill() // reaps and releases what go-plugin still holds
		i.proc = nil
	}
	// An earlier process ran (gen counts starts): it crashed, or a call
	// saw its connection break (broken).
	restart := i.gen > 0
	if err := i.start(ctx); err != nil {
		if ctx.Err() == nil && i.reattach == nil {
			// Its own failure, not the caller giving up: remembered, by
			// this host for good and by the cache for a while.
			i.failed = err
			i.host.cache.storeFailure(i.cand.Path, err)
		}
		return nil, 0, err
	}
	if restart {
		i.host.opts.Metrics.PluginRestarted(i.cand.Name)
	}
	return i.proc.rpc, i.gen, nil
}

// describe returns what the plugin says it serves: from the cache when
// this host has not started it yet and the cache knows the file, else by
// starting it. With failures, a start the cache remembers failing fails
// again without a try (see failureMemory).
func (i *instance) describe(ctx context.Context, failures bool) (plugin.Description, error) {
	if d, ok, err := i.remembered(failures); ok {
		return d, err
	}
	if _, _, err := i.live(ctx); err != nil {
		return plugin.Description{}, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return *i.desc, nil
}

// remembered is what the cache says of the plugin, when it says
// anything and this host has not started the plugin yet (after a start,
// the process's own answer holds). The lock file is checked as a start
// would, so that a cached description never stands in for a binary the
// lock refuses.
func (i *instance) remembered(failures bool) (plugin.Description, bool, error) {
	if i.reattach != nil {
		return plugin.Description{}, false, nil
	}
	i.mu.Lock()
	started := i.desc != nil || i.failed != nil || i.proc != nil
	i.mu.Unlock()
	if started {
		return plugin.Description{}, false, nil
	}
	// Once per host: a command asks for each plugin's modes several
	// times, and each look reads the entry and may hash the file.
	i.cacheOnce.Do(func() {
		i.cached, i.cacheHit = i.host.cache.load(i.cand.Path)
		if i.cacheHit && i.host.lock != nil {
			if err := i.host.lock.Verify(i.cand.Name, i.cand.Version, i.cand.Path); err != nil {
				i.cacheRefused = sandbox.NewError(sandbox.KindStart, "refused to start plugin", err)
			}
		}
	})
	e := i.cached
	remembered := i.cacheHit && (e.Description != nil || failures && time.Since(e.FailedAt) < failureMemory)
	if !remembered {
		return plugin.Description{}, false, nil
	}
	if i.cacheRefused != nil {
		return plugin.Description{}, true, i.cacheRefused
	}
	if e.Description != nil {
		return *e.Description, true, nil
	}
	return plugin.Description{}, true, &rememberedFailure{
		err: sandbox.Errorf(sandbox.KindStart, "plugin %s failed to start %s ago, not tried again for %s: %s",
			i.cand.Path, time.Since(e.FailedAt).Round(time.Second), failureMemory, e.Failure),
	}
}

// rememberedFailure is a failed start the cache remembers: the plugin was
// not tried again.
type rememberedFailure struct{ err error }

func (e *rememberedFailure) Error() string { return e.err.Error() }
func (e *rememberedFailure) Unwrap() error { return e.err }

// start launches the process (or attaches to it), completes the handshake
// and checks that the plugin is what its file name says. Called with mu
// held.
func (i *instance) start(ctx context.Context) error {
	proc, err := i.launch()
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, i.host.opts.StartTimeout)
	defer cancel()
	desc, err := proc.rpc.Describe(dctx)
	if err != nil {
		proc.kill()
		return i.startError(fmt.Errorf("describe: %w", err))
	}
	if err := i.checkIdentity(desc); err != nil {
		proc.kill()
		return err
	}
	i.proc, i.desc = proc, &desc
	i.gen++
	if i.reattach == nil {
		i.host.cache.storeDescription(i.cand.Path, desc)
	}
	i.log.Debug("plugin started", "path", i.cand.Path, "version", desc.Version, "pid", proc.client.ReattachConfig().Pid)
	return nil
}

// process is one plugin process and what its launch holds: the go-plugin
// client, the dispensed protocol client, the private directory its
// socket lives in and the command that started it.
type process struct {
	client     *goplugin.Client
	proto      goplugin.ClientProtocol
	rpc        *plugin.Client
	sockDir    string
	cmd        *exec.Cmd // nil when reattached
	reattached bool
	log        hclog.Logger
}

// How long stopping a plugin waits on it. go-plugin's Kill asks the
// plugin to exit over RPC, with no deadline of its own, then gives it 2 s
// before it kills it: a plugin that has not gone by killWait has stopped
// answering (frozen, deadlocked) and is killed without being asked
// further. reapWait bounds noticing that it died.
const (
	killWait = 4 * time.Second
	reapWait = 2 * time.Second
)

// kill ends the process and removes its socket directory, within
// killWait+reapWait whatever the plugin does. A plugin that is stopped
// (SIGSTOP, a tracer) is not asked at all: it is killed at once. The
// commands it runs through shared/shell die with it (they are started
// with a parent-death SIGKILL); what it holds elsewhere — containers, a
// resident in a pod — it cannot release, and its backend sweeps what a
// dead plugin left when it next starts. A reattached process is someone
// else's: only the connection is closed.
func (p *process) kill() {
	if p.reattached {
		if g, ok := p.proto.(*goplugin.GRPCClient); ok && g.Conn != nil {
			_ = g.Conn.Close()
		}
		return
	}
	defer func() {
		if p.sockDir != "" {
			_ = os.RemoveAll(p.sockDir)
		}
	}()
	if p.rpc != nil {
		// Its calls end now, as the connection's would.
		p.rpc.CloseCallsSocket()
	}
	if p.stopped() {
		p.log.Warn("plugin process is stopped; killing it without asking it to exit", "pid", p.pid())
		p.forceKill()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.client.Kill()
	}()
	select {
	case <-done:
		return
	case <-time.After(killWait):
	}
	p.log.Warn("plugin process did not exit when asked; killing it", "pid", p.pid(), "waited", killWait)
	p.forceKill()
	select {
	case <-done:
	case <-time.After(reapWait):
		p.log.Error("plugin process was killed but its exit was not seen", "pid", p.pid(), "waited", reapWait)
	}
}

// pid is the process's id, 0 when it has none.
func (p *process) pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// stopped reports whether the process is stopped by a signal or a tracer
// (state T or t in /proc/PID/stat). It looks only while go-plugin has not
// seen the process exit, so the pid is still our unreaped child's.
func (p *process) stopped() bool {
	pid := p.pid()
	if pid == 0 || p.client.Exited() {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold ") ".
	i := strings.LastIndex(string(stat), ") ")
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state == 'T' || state == 't'
}

// forceKill sends SIGKILL, then SIGCONT, so that nothing is left stopped
// should the kill not take. It signals through the os.Process, which
// knows when the child was reaped: never a recycled pid.
func (p *process) forceKill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
}

// launch starts the process (or attaches to it) and completes the
// handshake.
func (i *instance) launch() (*process, error) {
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  plugin.Handshake,
		VersionedPlugins: plugin.PluginSet(),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           pluginLogger{i.log},
		StartTimeout:     i.host.opts.StartTimeout,
		GRPCDialOptions:  plugin.DialOptions(),
		Stderr:           i.stderr,
	}
	if i.reattach != nil {
		// go-plugin negotiates nothing on reattach: it uses Plugins as is.
		cfg.Reattach = i.reattach
		cfg.Plugins = plugin.PluginSet()[plugin.ProtocolVersion]
		cfg.VersionedPlugins = nil
		return i.connect(&process{client: goplugin.NewClient(cfg), reattached: true, log: i.log})
	}
	// Integrity first: nothing runs that the lock file does not vouch
	// for, and what runs is the file that was hashed — executed through
	// the descriptor the hash read, so that whoever can write where it
	// was found (its owner, for a pinned plugin of another user) cannot
	// swap it between the check and the exec.
	var bin *os.File
	if i.host.lock != nil {
		f, err := discovery.OpenRegular(i.cand.Path)
		if err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, "refused to start plugin", err)
		}
		defer f.Close() // the child has its own copy once it has started
		if err := i.host.lock.VerifyFile(i.cand.Name, i.cand.Version, i.cand.Path, f); err != nil {
			return nil, sandbox.NewError(sandbox.KindStart, "refused to start plugin", err)
		}
		bin = f
	}
	// The socket goes in a directory only we can enter, removed with the
	// process even when the plugin crashed and never cleaned up.
	sockDir, err := os.MkdirTemp("", "promptkit-plugin-"+i.cand.Name+"-")
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, "plugin "+i.cand.Name+": socket directory", err)
	}
	cmd := exec.Command(i.cand.Path)
	// The plugin stops with the host, even when the host is SIGKILLed:
	// SIGTERM, not SIGKILL, so that it ends its calls and closes its
	// sandboxes first (a container it started must not outlive it). Its
	// shutdown is bounded (plugin.ShutdownGrace).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	// The OTEL_* variables make the plugin export its spans where we
	// export ours (shared/tracing). They are named here on purpose:
	// go-plugin appends our whole environment too (SkipHostEnv is off,
	// since backends find docker, kubectl and their configuration
	// through it), but tracing must not depend on that.
	cmd.Env = append([]string{
		plugin.EnvLogLevel + "=" + levelName(i.host.log),
		goplugin.EnvUnixSocketDir + "=" + sockDir,
	}, tracing.PluginEnv(os.Environ())...)
	if bin != nil {
		// The child runs the file it inherits (an inherited descriptor,
		// not a close-on-exec one, so that a #! script runs too); its
		// argv[0] is still the path, which a plugin may read its name
		// from. Serve closes the descriptor once running.
		fd := 3 + len(cmd.ExtraFiles)
		cmd.Path = fmt.Sprintf("/proc/self/fd/%d", fd)
		cmd.ExtraFiles = append(cmd.ExtraFiles, bin)
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", plugin.EnvExecFD, fd))
	}
	tlsPair, err := plugin.NewLaunchTLS()
	if err != nil {
		_ = os.RemoveAll(sockDir)
		return nil, sandbox.NewError(sandbox.KindStart, "plugin "+i.cand.Name+": generate TLS material", err)
	}
	// Once the child has started, the pipe carrying its key is the
	// child's; our end goes whatever happens next.
	defer tlsPair.Close()
	if err := tlsPair.Attach(cmd); err != nil {
		_ = os.RemoveAll(sockDir)
		return nil, sandbox.NewError(sandbox.KindStart, "plugin "+i.cand.Name+": pass TLS material", err)
	}
	// Calls go on a socketpair beside the gRPC connection (see
	// plugin.CallsSocket); a plugin that predates it leaves it unused.
	calls, err := plugin.NewCallsSocket()
	if err != nil {
		_ = os.RemoveAll(sockDir)
		return nil, sandbox.NewError(sandbox.KindStart, "plugin "+i.cand.Name+": calls socket", err)
	}
	defer calls.Close() // what the client has not taken
	calls.Attach(cmd)
	cfg.Cmd = cmd
	cfg.TLSConfig = tlsPair.HostConfig()
	p, err := i.connect(&process{client: goplugin.NewClient(cfg), sockDir: sockDir, cmd: cmd, log: i.log})
	calls.CloseChild()
	if err != nil {
		return nil, err
	}
	p.rpc.OfferCallsSocket(calls)
	return p, nil
}

// connect completes the handshake and dispenses the sandbox client.
func (i *instance) connect(p *process) (*process, error) {
	proto, err := p.client.Client()
	if err != nil {
		p.kill()
		return nil, i.startError(err)
	}
	p.proto = proto
	raw, err := proto.Dispense(plugin.PluginKey)
	if err != nil {
		p.kill()
		return nil, i.startError(err)
	}
	rpc, ok := raw.(*plugin.Client)
	if !ok {
		p.kill()
		return nil, i.startError(fmt.Errorf("dispensed %T, want *plugin.Client", raw))
	}
	p.rpc = rpc
	return p, nil
}

// checkIdentity refuses a plugin whose own name or version disagrees with
// its file name: a renamed or mislabelled binary must not pass for another.
// Unversioned files are development builds and may report any version.
func (i *instance) checkIdentity(d plugin.Description) error {
	if i.reattach != nil {
		return nil
	}
	if d.Name != i.cand.Name {
		return sandbox.Errorf(sandbox.KindStart, "plugin %s: reports its name as %q, not %q; refused", i.cand.Path, d.Name, i.cand.Name)
	}
	if isUnversioned(i.cand.Path) {
		return nil
	}
	if d.Version != i.cand.Version.String() {
		return sandbox.Errorf(sandbox.KindStart, "plugin %s: reports version %s but its file name says %s; refused", i.cand.Path, d.Version, i.cand.Version)
	}
	return nil
}

func (i *instance) startError(err error) error {
	what := i.cand.Path
	if i.reattach != nil {
		what = fmt.Sprintf("%s %s", i.cand.Name, i.cand.Path)
	}
	if last := lastLines(i.stderr.Bytes(), stderrLines); last != "" {
		return sandbox.Errorf(sandbox.KindStart, "start plugin %s: %w; its stderr ended: %s", what, err, last)
	}
	return sandbox.Errorf(sandbox.KindStart, "start plugin %s: %w", what, err)
}

// How much of a plugin's stderr a failed start quotes.
const (
	stderrTail  = 4096
	stderrLines = 5
)

// lastLines is the last n non-empty lines of b, joined with " | ".
func lastLines(b []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// broken retires the process of generation gen after a call saw its
// connection fail, so the next call starts a new one instead of finding
// the dead one before go-plugin has noticed it exited.
func (i *instance) broken(gen int) {
	i.mu.Lock()
	if i.gen != gen || i.proc == nil {
		i.mu.Unlock()
		return
	}
	proc := i.proc
	i.proc = nil
	i.mu.Unlock()
	proc.kill()
}

// frozen reports whether the running process is stopped (see
// process.stopped): nothing it is asked will be answered.
func (i *instance) frozen() bool {
	i.mu.Lock()
	proc := i.proc
	i.mu.Unlock()
	return proc != nil && !proc.reattached && proc.stopped()
}

// stop ends the process for good (see process.kill).
func (i *instance) stop() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.stopped = true
	if i.proc == nil {
		return nil
	}
	start := time.Now()
	i.proc.kill()
	i.log.Debug("plugin stopped", "elapsed", time.Since(start))
	i.proc = nil
	return nil
}

// pluginLogger gives go-plugin a logger already named for the plugin:
// go-plugin would otherwise name plugin logs after the binary's file name.
type pluginLogger struct{ hclog.Logger }

func (l pluginLogger) Named(string) hclog.Logger { return l.Logger }

// Info demotes go-plugin's note that a plugin exited, which it logs at
// INFO on every normal shutdown, to DEBUG; a crash is reported by the
// host's own WARN when the next call restarts the plugin.
func (l pluginLogger) Info(msg string, args ...any) {
	if msg == "plugin process exited" {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Info(msg, args...)
}

func levelName(l hclog.Logger) string {
	if lvl := l.GetLevel(); lvl != hclog.NoLevel {
		return lvl.String()
	}
	return "info"
}

// isUnversioned tells a development build's file name (no _vX.Y.Z) from
// one that names its version; plugin names cannot contain "_".
func isUnversioned(path string) bool {
	return !strings.Contains(filepath.Base(path), "_v")
}
