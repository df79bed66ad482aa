package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Defaults for the zero Options fields.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxResults  = 200
)

// Options configure a Manager. Zero fields take the defaults.
type Options struct {
	// Env is the servers' whole environment, as sandboxd gives its
	// shells (secrets already removed); the servers are found on its
	// PATH.
	Env []string
	// Credential, when set, is the user the servers run as.
	Credential *syscall.Credential
	// Specs are the servers by language: DefaultSpecs when nil.
	Specs []Spec
	// Timeout bounds each request, and starting a server.
	Timeout time.Duration
	// IdleTimeout stops a server nobody asked for this long.
	IdleTimeout time.Duration
	// MaxResults caps the locations an answer lists.
	MaxResults int
	// Unsettled, when set, reports whether something may be changing
	// files without telling (a running shell); the next question then
	// looks at every watched file, not only those reported changed.
	Unsettled func() bool
}

// Manager runs the language servers of one workspace, one per language,
// each started on its first question. It is safe for concurrent use.
type Manager struct {
	ws   *workspace.Workspace
	opts Options

	mu      sync.Mutex
	running map[string]*entry // by language
	closed  bool
	// starting collects what Changed reports while a server starts,
	// for it once it runs; nil when none is starting.
	starting map[string]bool

	startMu sync.Mutex     // one server starts at a time
	stopped sync.WaitGroup // idle servers being stopped
}

// entry is a running server and who is using it.
type entry struct {
	c     *client
	users int
	idle  *time.Timer
}

// ErrClosed is the error of a question after Close.
var ErrClosed = errors.New("language servers are shut down")

// New returns a manager for ws; it starts nothing yet.
func New(ws *workspace.Workspace, opts Options) *Manager {
	if opts.Specs == nil {
		opts.Specs = DefaultSpecs
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxResults <= 0 {
		opts.MaxResults = DefaultMaxResults
	}
	return &Manager{ws: ws, opts: opts, running: map[string]*entry{}}
}

// spec is the server for a file, by its extension.
func (m *Manager) spec(rel string) (Spec, error) {
	for _, s := range m.opts.Specs {
		if s.source(rel) {
			return s, nil
		}
	}
	var known []string
	for _, s := range m.opts.Specs {
		known = append(known, fmt.Sprintf("%s (%s)", s.Language, strings.Join(s.Extensions, ", ")))
	}
	ext := filepath.Ext(rel)
	if ext == "" {
		ext = filepath.Base(rel)
	}
	return Spec{}, fmt.Errorf("no language server for %s files; sandboxd knows %s", ext, strings.Join(known, ", "))
}

// acquire returns spec's running server, starting it (again, if it
// died); release gives it back. A start holds startMu, not mu, so
// Changed never waits for a server to come up.
func (m *Manager) acquire(ctx context.Context, spec Spec) (c *client, release func(), err error) {
	if e, err := m.take(spec.Language); e != nil || err != nil {
		return m.use(e, err)
	}
	m.startMu.Lock()
	defer m.startMu.Unlock()
	if e, err := m.take(spec.Language); e != nil || err != nil {
		return m.use(e, err)
	}
	m.mu.Lock()
	m.starting = map[string]bool{}
	m.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	c, err = start(sctx, spec, m.ws, m.opts)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		c.stop()
		return nil, nil, ErrClosed
	}
	e := &entry{c: c, users: 1}
	e.idle = time.AfterFunc(m.opts.IdleTimeout, func() { m.retire(spec.Language, e) })
	e.idle.Stop()
	// What changed while it started may have been after its scan.
	for rel := range m.starting {
		c.changed([]string{rel})
	}
	m.starting = nil
	m.running[spec.Language] = e
	m.mu.Unlock()
	return m.use(e, nil)
}

// take claims the running server of lang, or returns nil when there is
// none alive (a dead one is cleared away).
func (m *Manager) take(lang string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	e := m.running[lang]
	if e == nil {
		return nil, nil
	}
	if !e.c.alive() {
		delete(m.running, lang)
		e.idle.Stop()
		m.stopped.Go(e.c.stop)
		return nil, nil
	}
	e.users++
	e.idle.Stop()
	return e, nil
}

// use hands out a claimed entry with its release.
func (m *Manager) use(e *entry, err error) (*client, func(), error) {
	if err != nil {
		return nil, nil, err
	}
	return e.c, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if e.users--; e.users == 0 && !m.closed {
			e.idle.Reset(m.opts.IdleTimeout)
		}
	}, nil
}

// retire stops an idle server, unless someone took it up again.
func (m *Manager) retire(lang string, e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[lang] != e || e.users > 0 || m.closed {
		return
	}
	delete(m.running, lang)
	m.stopped.Go(e.c.stop)
}

// Changed tells the servers that sandboxd changed files at paths (as the
// agent gave them, absolute or relative to the workspace); no paths
// means anything may have changed. It only records: the servers hear of
// it before the next question.
func (m *Manager) Changed(paths ...string) {
	rels := make([]string, 0, len(paths))
	for _, p := range paths {
		if rel, err := m.ws.Rel(p); err == nil {
			rels = append(rels, rel)
		}
	}
	if len(paths) > 0 && len(rels) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.running {
		e.c.changed(rels)
	}
	if m.starting != nil {
		if len(rels) == 0 {
			rels = []string{""} // a rescan, for the starting server
		}
		for _, rel := range rels {
			m.starting[rel] = true
		}
	}
}

// Running lists the process IDs of the servers running now, by
// language.
func (m *Manager) Running() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for lang, e := range m.running {
		if e.c.alive() {
			out[lang] = e.c.proc.Pid()
		}
	}
	return out
}

// Close stops every server with its process group and waits for them.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	running := m.running
	m.running = map[string]*entry{}
	m.mu.Unlock()
	for _, e := range running {
		e.idle.Stop()
		m.stopped.Go(e.c.stop)
	}
	m.stopped.Wait()
	return nil
}
