// Command sandboxd is the codegen MCP daemon: the hands of a coding
// agent, contained in a workspace. See the README's sandboxd section.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/seal"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/snapshot"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

var (
	errNoTokenOffLoopback   = errors.New("refusing to listen beyond loopback without a token: give --token or --token-file")
	errWeakTokenOffLoopback = errors.New("refusing to listen beyond loopback with a short token")
)

// minRemoteToken is the shortest token, in bytes, sandboxd takes for a
// listener beyond loopback. Length is the one thing it can check; 32 is
// what 16 random bytes (128 bits) make in hex, e.g. openssl rand -hex 16,
// and a generated token has 64.
const minRemoteToken = 32

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	// Bash and the tools' commands are contained by starts of this
	// binary; so are the commands of the children below.
	supervisor.Init()
	// D2 renders and structural Go edits run in children of this
	// executable; this may be one.
	child.Serve()
	// Secrets in the environment or on the command line were sealed by
	// package seal's initialiser, before the heavy packages' ran: this
	// is the process it executed.
	getenv, err := seal.Unseal(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxd:", err)
		os.Exit(1)
	}
	// Non-dumpable: a process of the same user cannot read this one's
	// memory or /proc files (environ, mem, fds), nor ptrace it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxd: warning: cannot make the process non-dumpable:", err)
	}
	// Off the start's path: threads the agent's processes cannot take
	// from it later (see spareThreads).
	go reserveSpareThreads()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err = run(ctx, os.Args[1:], getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxd:", err)
		var bad *usageError
		if errors.As(err, &bad) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is bad input on the command line or in SANDBOXD_*: sandboxd
// exits 2 for it, as the project's other CLIs do, and 1 when something
// fails while it runs.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func badInput(err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &usageError{err}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, getenv, stderr)
	if err == nil {
		err = checkPidsLimit(o.pidsLimit)
	}
	if err != nil {
		return badInput(err)
	}
	if o.version {
		fmt.Fprintln(stdout, "sandboxd", version)
		return nil
	}
	log, err := newLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return badInput(err)
	}
	cfg, generated, err := o.config(getenv)
	if err != nil {
		return badInput(err)
	}
	cfg.Logger, cfg.Version = log, version
	dirs := make([]string, len(cfg.Workspaces))
	for i, w := range cfg.Workspaces {
		dirs[i] = w.Dir
	}
	user, err := resolveRunAs(o.runAs, dirs, os.Geteuid())
	if err != nil {
		return badInput(err)
	}
	if user.tempHome != "" {
		defer os.RemoveAll(user.tempHome)
	}
	if user.cred != nil {
		cfg.RunAs, cfg.Env = user.cred, user.env(cfg.Env)
	}
	user.log(log)
	cfg.GoCacheSeeded = seedGoCache(log, getenv, cfg.Env, cfg.RunAs != nil)
	if err := shell.IsolationAvailable(); err != nil {
		log.Warn("calls are not isolated from each other: a call can read the environment, secrets included, of the processes another call left running", "err", err)
	}
	if o.pidsLimit != 0 {
		if err := limitProcesses(o.pidsLimit); err != nil {
			return badInput(err)
		}
		log.Info("processes limited", "pids_limit", o.pidsLimit)
	}
	if o.egressSocket != "" && o.egressTunnel != "" {
		return badInput(errEgressBoth)
	}
	if o.egressSocket != "" {
		relay, err := startEgressRelay(o.egressListen, o.egressSocket)
		if err != nil {
			return badInput(err)
		}
		defer relay.Close()
		cfg.Env = shell.MergeEnv(cfg.Env, egressEnv(relay.Addr(), o.egressCA), nil)
		log.Info("egress through the provider's proxy", "listen", relay.Addr(), "socket", o.egressSocket)
	}
	if o.egressTunnel != "" {
		relay, tunnel, err := startEgressTunnel(o.egressListen, o.egressTunnel, cfg.Token, generated)
		if err != nil {
			return badInput(err)
		}
		defer tunnel.Close()
		defer relay.Close() // first: no connection waits for a session then
		cfg.Env = shell.MergeEnv(cfg.Env, egressEnv(relay.Addr(), o.egressCA), nil)
		log.Info("egress through the provider's proxy", "listen", relay.Addr(), "tunnel", tunnel.Addr().String())
	}
	loopback := localAddr(o.addr)
	if err := checkExposure(o.addr, o.stdio, cfg.Token, generated); err != nil {
		return badInput(err)
	}
	cfg.Metrics = telemetry.NewMetrics()
	started := func(...trace.SpanEndOption) {}
	// Set first: the provider reports OTEL_EXPORTER_OTLP_* settings it
	// cannot use, and a failed export, through it.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	tp, err := telemetry.NewTracerProvider(ctx, o.otlpEndpoint, getenv, version)
	if err != nil {
		return badInput(err)
	}
	if tp != nil {
		// Deferred first, so it runs last: after the server has ended
		// every call's span, it sends what is left.
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				log.Warn("tracing: flushing spans at exit", "err", err)
			}
		}()
		cfg.TracerProvider = tp
		log.Info("exporting spans over OTLP/HTTP")
		// A provider that starts sandboxd passes its span in TRACEPARENT:
		// the start is a step of its provisioning, in its trace.
		_, startSpan := tp.Tracer("sandboxd").Start(tracing.ExtractEnv(ctx, getenv), "sandboxd.start")
		defer startSpan.End() // a failed start; a served one ends it below
		started = startSpan.End
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	metricsURL := ""
	if o.metricsAddr != "" {
		ms, err := serveMetrics(o.metricsAddr, cfg.Metrics, log)
		if err != nil {
			_ = srv.Close()
			return err
		}
		defer ms.stop()
		metricsURL = ms.url()
		log.Info("serving metrics", "url", metricsURL)
	}
	if o.stdio {
		log.Info("serving MCP over stdio", "workspaces", describe(cfg.Workspaces))
		return srv.ServeStdio(ctx, stdin, stdout)
	}
	ln, err := listen(o.addr)
	if err != nil {
		_ = srv.Close()
		return err
	}
	if o.lifeline {
		ctx = stdinLifeline(ctx, stdin, log)
	}
	h := srv.NewHTTP(loopback)
	started()
	announce(stdout, listenURL(ln), metricsURL, cfg, generated)
	log.Info("serving MCP", "addr", ln.Addr().String(), "workspaces", describe(cfg.Workspaces), "readonly", cfg.ReadOnly)
	served := make(chan error, 1)
	go func() { served <- h.Serve(ln) }()
	select {
	case err = <-served:
		_ = h.Shutdown(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	err = h.Shutdown(context.Background())
	<-served
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// checkExposure refuses to serve beyond loopback without a token the user
// gave, or with one shorter than minRemoteToken: anyone who can reach the
// port could otherwise guess their way to the agent's shell. Over stdio
// nothing listens.
func checkExposure(addr string, stdio bool, token string, generated bool) error {
	if stdio || localAddr(addr) {
		return nil
	}
	if generated {
		return errNoTokenOffLoopback
	}
	if len(token) < minRemoteToken {
		return fmt.Errorf("%w: %s is not loopback, so the token must be at least %d characters (it has %d); make one with openssl rand -hex 16",
			errWeakTokenOffLoopback, addr, minRemoteToken, len(token))
	}
	return nil
}

// config turns options into a server.Config; generated says the token
// was made up here rather than given.
func (o options) config(getenv func(string) string) (server.Config, bool, error) {
	workspaces, err := o.serverWorkspaces()
	if err != nil {
		return server.Config{}, false, err
	}
	token, generated := o.token, false
	if o.tokenFile != "" {
		if token != "" {
			return server.Config{}, false, errors.New("give --token or --token-file, not both")
		}
		if token, err = seal.ReadToken(o.tokenFile); err != nil {
			return server.Config{}, false, err
		}
	}
	if token == "" {
		b := make([]byte, 32)
		rand.Read(b)
		token, generated = hex.EncodeToString(b), true
	}
	secrets := map[string]string{}
	for _, name := range o.secretEnv {
		secrets[name] = getenv(name)
	}
	// The OTLP exporter's headers often hold a collector's API key: the
	// agent's shells do not get them, and results never show them.
	for _, name := range seal.OTLPHeaderEnv {
		if v := getenv(name); v != "" {
			secrets[name] = v
		}
	}
	origins := make([]string, 0, len(o.allowedOrigins))
	for _, raw := range o.allowedOrigins {
		origin, err := server.OriginOf(raw)
		if err != nil {
			return server.Config{}, false, fmt.Errorf("--allowed-origin: %w", err)
		}
		origins = append(origins, origin)
	}
	if o.diagTimeout < 0 {
		return server.Config{}, false, fmt.Errorf("--diagnostics-timeout %s: want a duration of 0 (off) or more", o.diagTimeout)
	}
	diagTimeout := o.diagTimeout
	if diagTimeout == 0 {
		diagTimeout = -1 // off; the Config's zero is the default
	}
	if o.callBudget < 0 {
		return server.Config{}, false, fmt.Errorf("--call-budget %s: want a duration of 0 (none) or more", o.callBudget)
	}
	if o.maxBody <= 0 {
		return server.Config{}, false, fmt.Errorf("--max-body %d: want a positive number of bytes", o.maxBody)
	}
	if o.snapshotMaxFileSize <= 0 {
		return server.Config{}, false, fmt.Errorf("--snapshot-max-file-size %d: want a positive number of bytes", o.snapshotMaxFileSize)
	}
	snapshotDir := o.snapshotDir
	if snapshotDir != "" {
		if snapshotDir, err = filepath.Abs(snapshotDir); err != nil {
			return server.Config{}, false, fmt.Errorf("--snapshot-dir: %w", err)
		}
		// Symlinks resolved once, here: the check that it is not in a
		// workspace and every later use see the same directory.
		snapshotDir = snapshot.Resolve(snapshotDir)
	}
	return server.Config{
		Workspaces:         workspaces,
		Token:              token,
		AllowedOrigins:     origins,
		ReadOnly:           o.readonly,
		AllowGitWrites:     o.allowGitWrites,
		Secrets:            secrets,
		Env:                os.Environ(),
		MaxBody:            o.maxBody,
		ShutdownGrace:      o.shutdownGrace,
		DiagnosticsTimeout: diagTimeout,
		CallBudget:         o.callBudget,

		SnapshotDir:         snapshotDir,
		SnapshotMaxFileSize: o.snapshotMaxFileSize,
	}, generated, nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

func describe(ws []server.Workspace) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Dir
		if w.Name != "" {
			parts[i] = w.Name + "=" + w.Dir
		}
	}
	return strings.Join(parts, " ")
}

// announce prints what a user needs to connect: the URLs, the token and a
// client config to paste. A token the user gave is not echoed (it may
// come from a secret store and stdout may be a log); the snippet then
// reads it from SANDBOXD_TOKEN.
func announce(w io.Writer, base, metricsURL string, cfg server.Config, generated bool) {
	token := "${SANDBOXD_TOKEN}" // #nosec G101 -- a placeholder in the printed client config, which the client fills from its environment
	if generated {
		token = cfg.Token
	}
	fmt.Fprintf(w, "sandboxd %s serving %s\n", version, describe(cfg.Workspaces))
	if metricsURL != "" {
		fmt.Fprintf(w, "  Metrics (Prometheus): %s\n", metricsURL)
	}
	if path := unixPath(base); path != "" {
		// No URL a client could paste: whoever forwards the socket
		// prints one for the port it forwards from.
		fmt.Fprintf(w, "  MCP (Streamable HTTP at %s, HTTP+SSE at %s) on unix socket %s (mode %#o)\n", server.PathMCP, server.PathSSE, path, socketMode)
		if generated {
			fmt.Fprintf(w, "  Token (generated for this run; fix one with --token-file): %s\n", cfg.Token)
		}
		return
	}
	fmt.Fprintf(w, "  MCP (Streamable HTTP): %s%s\n", base, server.PathMCP)
	fmt.Fprintf(w, "  MCP (HTTP+SSE):        %s%s\n", base, server.PathSSE)
	fmt.Fprintf(w, "  PromptKit (either transport): %s\n", base)
	if generated {
		fmt.Fprintf(w, "  Token (generated for this run; fix one with --token-file): %s\n", cfg.Token)
	} else {
		fmt.Fprintln(w, "  Token: as given (not shown); the config below reads it from $SANDBOXD_TOKEN")
	}
	snippet := map[string]any{"mcpServers": map[string]any{"sandboxd": map[string]any{
		"type":    "http",
		"url":     base + server.PathMCP,
		"headers": map[string]string{"Authorization": "Bearer " + token},
	}}}
	b, _ := json.MarshalIndent(snippet, "  ", "  ")
	fmt.Fprintf(w, "  Client config (.mcp.json):\n  %s\n", b)
	fmt.Fprintf(w, "  Or: claude mcp add --transport http sandboxd %s%s --header \"Authorization: Bearer %s\"\n", base, server.PathMCP, token)
}
