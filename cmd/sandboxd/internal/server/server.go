package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/files"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/lsp"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/shells"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/symbols"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/testcover"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/verify"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Server is sandboxd: its workspaces, the tools on them and the MCP
// server that offers the tools. Serve it over HTTP with Handler or
// ServeHTTP, or over stdio with ServeStdio; Close ends every shell.
type Server struct {
	cfg    Config
	log    *slog.Logger
	scrub  *scrub.Scrubber
	spaces map[string]*space
	names  []string // sorted workspace names, for error messages
	mcp    *mcpserver.MCPServer
	calls  *calls
	tel    *telemetry.Telemetry

	mu      sync.Mutex
	ledgers map[string]*files.Ledger // by MCP session
	failed  *failures                // tests that failed, by MCP session
	ending  sync.WaitGroup           // ended sessions' shells being killed

	snapshots *snapshotStores

	closeOnce sync.Once
	closeErr  error
}

// space is one workspace and the tools bound to it.
type space struct {
	name    string
	ws      *workspace.Workspace
	files   *files.Files
	search  *search.Searcher
	symbols *symbols.Index
	shells  *shells.Manager
	verify  *verify.Verifier
	lsp     *lsp.Manager
	cover   *testcover.Cover
}

// New opens the workspaces and builds the tools. Close releases them.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	secrets := map[string]string{"SANDBOXD_TOKEN": cfg.Token}
	for name, value := range cfg.Secrets {
		secrets[name] = value
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		scrub:   scrub.New(secrets),
		spaces:  map[string]*space{},
		calls:   newCalls(),
		tel:     telemetry.New(cfg.Metrics, cfg.TracerProvider, cfg.Logger),
		ledgers: map[string]*files.Ledger{},
		failed:  newFailures(),
	}
	s.snapshots = newSnapshotStores(cfg)
	env := shellEnv(cfg.Env, secrets)
	for _, w := range cfg.Workspaces {
		sp, err := s.openSpace(w, env)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.spaces[w.Name] = sp
		s.names = append(s.names, w.Name)
	}
	slices.Sort(s.names)
	cfg.Metrics.ActiveShells(s.activeShells)
	s.mcp = s.newMCP()
	return s, nil
}

func (s *Server) openSpace(w Workspace, env []string) (*space, error) {
	ws, err := workspace.Open(w.Dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %q: %w", w.Dir, err)
	}
	if c := s.cfg.RunAs; c != nil {
		ws.SetOwner(int(c.Uid), int(c.Gid))
	}
	// rg and ctags run as the agent's user, since the agent can swap what
	// they walk for a symlink at any moment, and with the agent's
	// environment, since the agent can read theirs.
	searcher, err := search.New(ws, search.Options{RipgrepPath: s.cfg.RipgrepPath, Scrubber: s.scrub, OnRedact: s.cfg.Metrics.Redacted, Credential: s.cfg.RunAs, Env: env})
	if err != nil {
		_ = ws.Close()
		return nil, fmt.Errorf("workspace %q: %w", w.Dir, err)
	}
	sp := &space{
		name:    w.Name,
		ws:      ws,
		files:   files.New(ws, files.Options{AllowGitWrites: s.cfg.AllowGitWrites, Scrubber: s.scrub}),
		search:  searcher,
		symbols: symbols.New(ws.Dir(), searcher, symbols.Options{Credential: s.cfg.RunAs, Env: env}),
		shells:  shells.New(shells.Options{Dir: ws.Dir(), Env: env, Scrubber: s.scrub, OnRedact: s.cfg.Metrics.Redacted, Credential: s.cfg.RunAs, Budget: s.cfg.CallBudget}),
		verify:  verify.New(ws, verify.Options{Env: env, Credential: s.cfg.RunAs}),
		cover:   testcover.New(ws, testcover.Options{Env: env, Credential: s.cfg.RunAs}),
	}
	sp.lsp = newLSP(ws, sp.shells, env, s.cfg.RunAs)
	return sp, nil
}

// activeShells counts the commands running in every workspace.
func (s *Server) activeShells() int {
	n := 0
	for _, sp := range s.spaces {
		if sp.shells != nil {
			n += sp.shells.Active()
		}
	}
	return n
}

// shellEnv is env without the registered secrets, so a shell cannot print
// what the scrubber would have to catch.
func shellEnv(env []string, secrets map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, secret := secrets[name]; !secret {
			out = append(out, kv)
		}
	}
	return out
}

// MCP is the mcp-go server, for transports this package does not wire.
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// space picks the workspace a call names; with one workspace the name
// may be left out.
func (s *Server) space(name string) (*space, error) {
	if name == "" {
		if len(s.spaces) == 1 {
			return s.spaces[s.names[0]], nil
		}
		return nil, fmt.Errorf("several workspaces are served; say which with the workspace argument: %s", strings.Join(s.names, ", "))
	}
	if sp, ok := s.spaces[name]; ok {
		return sp, nil
	}
	if len(s.spaces) == 1 && s.names[0] == "" {
		return nil, fmt.Errorf("unknown workspace %q: this server has one, unnamed; leave workspace out", name)
	}
	return nil, fmt.Errorf("unknown workspace %q; the workspaces are: %s", name, strings.Join(s.names, ", "))
}

// ledger is what the calling MCP session has read (in every workspace:
// a Ledger keys by workspace itself). Read-before-write is per session,
// so one agent's Read never licenses another's Write.
func (s *Server) ledger(ctx context.Context) *files.Ledger {
	session := sessionID(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.ledgers[session]
	if !ok {
		l = files.NewLedger()
		s.ledgers[session] = l
	}
	return l
}

// forget cancels a finished session's calls in flight (each kills what
// it started), drops its ledger and kills its background shells, then
// drops its failed-test records (after the shells: a test run going on
// in the background records its failures when it ends), off the caller's
// path (the hook runs inside the DELETE that ended the session, which
// should not wait for a kill grace).
func (s *Server) forget(session string) {
	s.calls.cancelSession(session)
	s.mu.Lock()
	delete(s.ledgers, session)
	s.mu.Unlock()
	s.ending.Go(func() {
		var wg sync.WaitGroup
		for _, sp := range s.spaces {
			if sp.shells != nil {
				wg.Go(func() { sp.shells.Forget(session) })
			}
		}
		wg.Wait()
		s.failed.forget(session)
	})
}

func sessionID(ctx context.Context) string {
	if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// Close kills every shell and closes the workspaces; later calls return
// the first one's result. In-flight calls are the caller's to drain first
// (Shutdown does).
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		for _, sp := range s.spaces {
			if sp.shells != nil {
				errs = append(errs, sp.shells.Close())
			}
			errs = append(errs, sp.lsp.Close(), sp.symbols.Close(), sp.search.Close(), sp.ws.Close())
		}
		s.ending.Wait()
		errs = append(errs, s.snapshots.close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
