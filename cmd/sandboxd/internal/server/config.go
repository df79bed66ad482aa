package server

import (
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/snapshot"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
)

// Defaults for the zero values of Config.
const (
	DefaultAddr          = "127.0.0.1:7424"
	DefaultMaxBody       = 10 << 20
	DefaultShutdownGrace = 10 * time.Second
	DefaultCallBudget    = 25 * time.Second
)

// Workspace is one directory the tools work in, under a name agents use
// to pick it when there are several.
type Workspace struct {
	Name string
	Dir  string
}

// Config is everything a Server is built from; cmd/sandboxd fills it
// from flags and SANDBOXD_* variables.
type Config struct {
	Workspaces     []Workspace
	Token          string
	AllowedOrigins []string
	// ReadOnly registers only the tools that change nothing: Read, Glob
	// and Grep.
	ReadOnly bool
	// AllowGitWrites lets Write and Edit change files under .git, which
	// they refuse by default: what is there runs on the host.
	AllowGitWrites bool
	// RunAs, when set, is the user the agent's commands (Bash, the
	// checks) run as, and the owner of the files and directories Write
	// creates; sandboxd must be root. Nil runs them as sandboxd's user.
	RunAs *syscall.Credential
	// Secrets maps a secret's name to its value: the values are scrubbed
	// from every result and the names are removed from the shell's
	// environment.
	Secrets map[string]string
	// Env is the environment shells start from, before secrets are
	// removed ("KEY=value").
	Env           []string
	MaxBody       int64
	ShutdownGrace time.Duration
	Logger        *slog.Logger
	Version       string
	// Metrics, when set, are where tool calls, refusals, redactions and
	// active shells are counted (serve them with Metrics.Handler); nil
	// counts in metrics of the server's own that nothing serves.
	Metrics *telemetry.Metrics
	// TracerProvider, when set, makes a span of each tool call; nil
	// makes none.
	TracerProvider trace.TracerProvider
	// DiagnosticsTimeout bounds the checks Write and Edit run on the
	// files they change: 0 means DefaultDiagnosticsTimeout, negative
	// turns the checks off.
	DiagnosticsTimeout time.Duration
	// CallBudget, when positive, is how long a Bash command or a test,
	// lint or type-check run may hold its call: one still running then
	// (and given a longer timeout) answers with what it has so far and
	// goes on as a background shell, read with BashOutput and stopped
	// with KillShell. Zero holds the call to the end. cmd/sandboxd sets
	// DefaultCallBudget, under the 30 s after which PromptKit gives up on
	// a call.
	CallBudget time.Duration
	// RipgrepPath overrides where rg is found (default: on PATH).
	RipgrepPath string
	// SnapshotDir holds the workspaces' snapshots, each in a directory
	// of its own (mode 0700) so they outlive the server; empty keeps them
	// in a private temporary directory removed at Close.
	SnapshotDir string
	// SnapshotMaxFileSize is the largest file a snapshot holds, in
	// bytes; 0 means snapshot.DefaultMaxFileSize.
	SnapshotMaxFileSize int64
	// GoCacheSeeded, when not nil, is closed once the seed of the
	// agent's Go build cache has been copied in. Test, lint and
	// type-check runs wait for it (within their call budget): one that
	// started beside the copy would compile again what the copy is
	// about to bring, and the first run_tests of a fresh sandbox would
	// cost it the whole standard library. nil: nothing to wait for.
	GoCacheSeeded <-chan struct{}
}

func (c Config) withDefaults() Config {
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = telemetry.NewMetrics()
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	return c
}

func (c Config) validate() error {
	if len(c.Workspaces) == 0 {
		return errors.New("no workspace: give --workspace DIR")
	}
	seen := map[string]bool{}
	for _, w := range c.Workspaces {
		if len(c.Workspaces) > 1 && w.Name == "" {
			return fmt.Errorf("workspace %q has no name: with several workspaces each is NAME=DIR", w.Dir)
		}
		if seen[w.Name] {
			return fmt.Errorf("workspace name %q is given twice", w.Name)
		}
		seen[w.Name] = true
	}
	if c.Token == "" {
		return errors.New("no token")
	}
	if c.CallBudget < 0 {
		return fmt.Errorf("call budget %s: want 0 (none) or more", c.CallBudget)
	}
	for _, w := range c.Workspaces {
		if c.SnapshotDir != "" && snapshot.Inside(w.Dir, c.SnapshotDir) {
			return fmt.Errorf("the snapshot directory %s is inside the workspace %s, where the agent could change it", c.SnapshotDir, w.Dir)
		}
	}
	return nil
}
