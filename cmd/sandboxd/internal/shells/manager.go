package shells

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/guard"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Defaults applied by New to zero Options fields.
const (
	defaultTimeout       = 120 * time.Second
	defaultMaxTimeout    = 600 * time.Second
	defaultMaxOutput     = 30000
	defaultMaxBackground = 16
	defaultMaxBuffered   = 1 << 20
	defaultMaxWatched    = 8
)

// bashPath is absolute because shell.Start resolves a bare name through
// sandboxd's own PATH, not the command's.
const bashPath = "/bin/bash"

// Options configure a Manager. Zero fields take the defaults: timeouts of
// 120s (default) and 600s (max), 30000 bytes of output, 16 background
// shells, 1 MiB unread per background stream.
type Options struct {
	// Dir is the workspace root, where every command starts.
	Dir string
	// Env is the whole environment of every command ("K=V"), secrets
	// already removed by the caller. Entries without "=" are dropped.
	Env []string
	// Scrubber scrubs all output as it arrives; nil means none.
	Scrubber *scrub.Scrubber
	// OnRedact, when set, is told how many redactions the Scrubber made
	// in output as it is released (for sandboxd's metrics).
	OnRedact func(n int)
	// DefaultTimeout applies to a foreground command without one.
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a command may ask for.
	MaxTimeout time.Duration
	// MaxOutput caps a result in bytes (stdout and stderr together);
	// the middle of longer output is elided.
	MaxOutput int
	// MaxBackground caps the background shells running at once.
	MaxBackground int
	// MaxBuffered caps each background stream's unread bytes; older
	// bytes are dropped.
	MaxBuffered int
	// MaxWatched caps the watched processes running at once (they count
	// as background shells too); 0 means 8.
	MaxWatched int
	// Budget, when positive, is how long a foreground command may hold
	// its call: one still running then, whose timeout is longer, goes on
	// as a background shell, and the call answers with its output so far
	// and the shell's ID (see Adopt for work other than a command).
	Budget time.Duration
	// Credential, when set, is the user every command runs as (sandboxd
	// must be root): not sandboxd's, so a command can neither signal
	// sandboxd nor read its memory.
	Credential *syscall.Credential
}

func (o Options) withDefaults() Options {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = defaultTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = defaultMaxTimeout
	}
	o.DefaultTimeout = min(o.DefaultTimeout, o.MaxTimeout)
	if o.MaxOutput <= 0 {
		o.MaxOutput = defaultMaxOutput
	}
	if o.MaxBackground <= 0 {
		o.MaxBackground = defaultMaxBackground
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = defaultMaxBuffered
	}
	if o.MaxWatched <= 0 {
		o.MaxWatched = defaultMaxWatched
	}
	return o
}

// Manager runs commands and keeps background shells. It is safe for
// concurrent use.
type Manager struct {
	opts Options
	env  []string

	mu       sync.Mutex
	closed   bool
	shells   map[string]*bgShell
	tombs    map[string]tomb
	tombList []string                    // tombstone IDs, oldest first
	fg       map[*shell.Process]struct{} // foreground commands running
	fgWG     sync.WaitGroup
}

// New returns a Manager for opts.
func New(opts Options) *Manager {
	var env []string
	for _, kv := range opts.Env {
		// A bare key would be looked up in sandboxd's environment.
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			env = append(env, kv)
		}
	}
	return &Manager{
		opts:   opts.withDefaults(),
		env:    env,
		shells: map[string]*bgShell{},
		tombs:  map[string]tomb{},
		fg:     map[*shell.Process]struct{}{},
	}
}

// Active is how many commands are running now: foreground ones and
// background shells that have not ended.
func (m *Manager) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.fg)
	for _, sh := range m.shells {
		if !sh.finished() {
			n++
		}
	}
	return n
}

// Command is one Bash tool call.
type Command struct {
	Command string
	// Timeout bounds a foreground command: 0 means DefaultTimeout, more
	// than MaxTimeout is an error. Background shells have none.
	Timeout     time.Duration
	Description string
	Background  bool
	// Owner is who starts a background shell (the MCP session): only
	// the same owner can read or kill it, and Forget kills them all.
	Owner string
	// Env adds "K=V" entries to this command's environment alone,
	// replacing Options.Env's value for the same key: secrets the agent
	// named for this call. Entries without "=" are dropped.
	Env []string
}

// errClosed is returned by Bash after Close.
var errClosed = errors.New("bash: the shell manager is closed")

// Bash runs c. A foreground command's result carries its output and exit
// status, a background one's the new shell's ID. Errors are for refused
// commands (a *guard.Refusal), bad arguments and failures to start.
func (m *Manager) Bash(ctx context.Context, c Command) (string, error) {
	if err := check(c); err != nil {
		return "", err
	}
	timeout, err := m.timeout(c.Timeout)
	if err != nil {
		return "", err
	}
	if c.Background {
		return m.startBackground(c, nil)
	}
	return m.runForeground(ctx, c, timeout)
}

// check refuses an empty command and what the guard denies.
func check(c Command) error {
	if strings.TrimSpace(c.Command) == "" {
		return errors.New("bash: empty command")
	}
	return guard.Check(c.Command)
}

func (m *Manager) timeout(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("bash: timeout must not be negative (got %s)", d)
	case d == 0:
		return m.opts.DefaultTimeout, nil
	case d > m.opts.MaxTimeout:
		return 0, fmt.Errorf("bash: timeout %s exceeds the maximum of %s", d, m.opts.MaxTimeout)
	}
	return d, nil
}

// start launches c; m.mu must be held, so Close cannot miss it.
func (m *Manager) start(ctx context.Context, c Command, timeout time.Duration, stdout, stderr io.Writer) (*shell.Process, error) {
	if m.closed {
		return nil, errClosed
	}
	p, err := shell.Start(ctx, sandbox.Request{
		Command: bashPath,
		Args:    []string{"-c", c.Command},
		Env:     m.envFor(c),
	}, shell.Options{
		Dir:        m.opts.Dir,
		Timeout:    timeout,
		CleanEnv:   true,
		Credential: m.opts.Credential,
		Isolated:   true,
		// The sinks bound memory themselves and must see every byte: the
		// tail of the output is what matters most.
		OutputLimit: math.MaxInt,
		StdoutSink:  stdout,
		StderrSink:  stderr,
	})
	if err != nil {
		// A missing workspace reads as a missing /bin/bash otherwise.
		return nil, fmt.Errorf("bash: in %q: %w", m.opts.Dir, err)
	}
	return p, nil
}

// envFor is the environment of c: Options.Env with c.Env over it.
func (m *Manager) envFor(c Command) []string {
	if len(c.Env) == 0 {
		return m.env
	}
	extra := make([]string, 0, len(c.Env))
	for _, kv := range c.Env {
		// As in New: a bare key would be looked up in sandboxd's environment.
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			extra = append(extra, kv)
		}
	}
	return shell.MergeEnv(m.env, extra, nil)
}

// Close kills every command and background shell, each with its whole
// process group, and waits for them. It is idempotent; Bash refuses
// afterwards.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	fg := make([]*shell.Process, 0, len(m.fg))
	for p := range m.fg {
		fg = append(fg, p)
	}
	bg := make([]*bgShell, 0, len(m.shells))
	for _, sh := range m.shells {
		bg = append(bg, sh)
	}
	m.mu.Unlock()

	for _, p := range fg {
		p.Stop()
	}
	stopShells(bg)
	m.fgWG.Wait()
	return nil
}
