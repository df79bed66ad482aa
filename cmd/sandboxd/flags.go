package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/snapshot"
)

// options are sandboxd's settings, from flags over SANDBOXD_* variables.
type options struct {
	workspaces     list
	addr           string
	metricsAddr    string
	otlpEndpoint   string
	token          string
	tokenFile      string
	allowedOrigins list
	readonly       bool
	allowGitWrites bool
	runAs          string
	secretEnv      list
	maxBody        int64
	logLevel       string
	logFormat      string
	stdio          bool
	lifeline       bool
	shutdownGrace  time.Duration
	diagTimeout    time.Duration
	callBudget     time.Duration
	version        bool

	snapshotDir         string
	snapshotMaxFileSize int64

	egressSocket string
	egressTunnel string
	egressListen string
	egressCA     string

	pidsLimit uint64
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

const usage = `Usage: sandboxd [flags]

sandboxd is the hands of a coding agent: file, search and shell tools
contained in a workspace, served over MCP (Streamable HTTP at /mcp and at /, legacy
HTTP+SSE at /sse, or stdio).

Flags (each also read from the SANDBOXD_* variable named beside it; a flag
given on the command line wins):
`

// parseOptions reads flags from args over the environment getenv gives.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := applyEnv(fs, getenv); err != nil {
		return o, err
	}
	// The environment filled repeatable flags; the command line replaces
	// rather than extends them.
	fromEnv := map[string]list{"workspace": o.workspaces, "allowed-origin": o.allowedOrigins, "secret-env": o.secretEnv}
	o.workspaces, o.allowedOrigins, o.secretEnv = nil, nil, nil
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	for name, l := range map[string]*list{"workspace": &o.workspaces, "allowed-origin": &o.allowedOrigins, "secret-env": &o.secretEnv} {
		if *l == nil {
			*l = fromEnv[name]
		}
	}
	return o, nil
}

// newFlagSet binds sandboxd's flags to o. (Package seal walks the same
// flags on its own: a test holds its list of those without a value to
// this set.)
func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sandboxd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&o.workspaces, "workspace", "workspace `DIR`, or NAME=DIR, repeatable (SANDBOXD_WORKSPACE, ':'-separated; default .)")
	fs.StringVar(&o.addr, "addr", server.DefaultAddr, "listen `address`: HOST:PORT, or unix:PATH for a unix socket (mode 0600, removed on shutdown) (SANDBOXD_ADDR)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on `address` (HOST:PORT or unix:PATH), apart from MCP and without a token; off when empty (SANDBOXD_METRICS_ADDR)")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export a span per tool call over OTLP/HTTP to `URL` (e.g. http://127.0.0.1:4318; /v1/traces is added to a URL without a path); default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, off when none is set (SANDBOXD_OTLP_ENDPOINT)")
	fs.StringVar(&o.token, "token", "", "bearer `token` clients must send (SANDBOXD_TOKEN); without it and --token-file one is generated")
	fs.StringVar(&o.tokenFile, "token-file", "", "read the bearer token from `FILE` (SANDBOXD_TOKEN_FILE)")
	fs.Var(&o.allowedOrigins, "allowed-origin", "an `origin` browsers may call from, e.g. http://localhost:3000, repeatable (SANDBOXD_ALLOWED_ORIGIN, comma-separated)")
	fs.BoolVar(&o.readonly, "readonly", false, "offer only the tools that change nothing: Read, Glob, Grep (SANDBOXD_READONLY)")
	fs.BoolVar(&o.allowGitWrites, "allow-git-writes", false, "let Write and Edit change files under .git, refused by default: core.fsmonitor or a hook written there runs on the host at the next git command (SANDBOXD_ALLOW_GIT_WRITES)")
	fs.StringVar(&o.runAs, "run-as", "", "run the agent's commands as `USER` (a name, UID or UID:GID; sandboxd must be root); as root the default is the workspace's owner, or, when root owns it, UID 65532 given the workspace by POSIX ACLs; root only when asked for with --run-as root (SANDBOXD_RUN_AS)")
	fs.Var(&o.secretEnv, "secret-env", "environment variable `NAME` holding a secret: its value is scrubbed from all output and it is not passed to shells; repeatable (SANDBOXD_SECRET_ENV, comma-separated)")
	fs.Int64Var(&o.maxBody, "max-body", server.DefaultMaxBody, "largest request body in `bytes` (SANDBOXD_MAX_BODY)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error (SANDBOXD_LOG_LEVEL)")
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json (SANDBOXD_LOG_FORMAT)")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace", server.DefaultShutdownGrace, "how long in-flight calls get to finish on SIGTERM before they are cancelled (SANDBOXD_SHUTDOWN_GRACE)")
	fs.DurationVar(&o.diagTimeout, "diagnostics-timeout", server.DefaultDiagnosticsTimeout, "how long the checks Write and Edit run on the files they change may take (go vet, pyflakes, tsc, cargo check); 0 turns them off (SANDBOXD_DIAGNOSTICS_TIMEOUT)")
	fs.DurationVar(&o.callBudget, "call-budget", server.DefaultCallBudget, "how long a Bash command or a run_tests, run_lint, run_typecheck or run_failing_tests run may hold its call: one still running then answers with its output so far and goes on as a background shell, read with BashOutput and stopped with KillShell; keep it under the client's own call timeout (PromptKit's is 30s); 0 holds every call to its end (SANDBOXD_CALL_BUDGET)")
	fs.StringVar(&o.snapshotDir, "snapshot-dir", "", "keep the snapshot tools' stores in `DIR`, one private (0700) directory per workspace, so snapshots outlive sandboxd; default a private temporary directory removed at exit (SANDBOXD_SNAPSHOT_DIR)")
	fs.Int64Var(&o.snapshotMaxFileSize, "snapshot-max-file-size", snapshot.DefaultMaxFileSize, "largest file, in `bytes`, a snapshot holds; larger ones are skipped and reported (SANDBOXD_SNAPSHOT_MAX_FILE_SIZE)")
	fs.BoolVar(&o.stdio, "stdio", false, "serve MCP over stdin and stdout instead of HTTP (SANDBOXD_STDIO)")
	fs.BoolVar(&o.lifeline, "exit-on-stdin-eof", false, "shut down when stdin ends: a provider holding the container's stdin takes sandboxd down with it (SANDBOXD_EXIT_ON_STDIN_EOF)")
	fs.StringVar(&o.egressSocket, "egress-socket", "", "the unix socket `PATH` of the provider's egress proxy, the sandbox's one way out: sandboxd relays --egress-listen to it and points the agent's commands at it (HTTP_PROXY and the rest); off when empty (SANDBOXD_EGRESS_SOCKET)")
	fs.StringVar(&o.egressTunnel, "egress-tunnel", "", "listen on `ADDR` (e.g. $(POD_IP):7426) for the provider's egress tunnel, for a sandbox that can dial nothing, not even its provider: the provider connects in with sandboxd's token, the first to do so holds the tunnel while it lasts, and sandboxd relays --egress-listen through it as it would to --egress-socket, which it excludes; off loopback the token must be given, as for --addr; off when empty (SANDBOXD_EGRESS_TUNNEL)")
	fs.StringVar(&o.egressListen, "egress-listen", DefaultEgressListen, "the loopback `address` the egress relay listens on (SANDBOXD_EGRESS_LISTEN)")
	fs.StringVar(&o.egressCA, "egress-ca", "", "a CA bundle `FILE` the agent's commands trust, for a proxy that adds credentials to HTTPS requests (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS and the like) (SANDBOXD_EGRESS_CA)")
	fs.Uint64Var(&o.pidsLimit, "pids-limit", 0, "hold this sandbox's user to `N` processes and threads (RLIMIT_NPROC, sandboxd's own threads counted), for a sandbox whose runtime sets no pids limit of its own: a fork bomb of the agent's is held there; the user must be this sandbox's alone, as the kernel counts all of a user's processes; 0 sets none (SANDBOXD_PIDS_LIMIT)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// applyEnv sets each flag from its SANDBOXD_ variable, before the command
// line is parsed over them.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || f.Name == "version" {
			return
		}
		name := "SANDBOXD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(name)
		if v == "" {
			return
		}
		parts := []string{v}
		switch f.Name {
		case "workspace":
			parts = filepath.SplitList(v)
		case "allowed-origin", "secret-env":
			parts = strings.Split(v, ",")
		}
		for _, p := range parts {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if serr := f.Value.Set(p); serr != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, serr)
				return
			}
		}
	})
	return err
}

// workspaces turns --workspace values into named workspaces: one bare DIR
// is unnamed; NAME=DIR names it.
func (o options) serverWorkspaces() ([]server.Workspace, error) {
	values := o.workspaces
	if len(values) == 0 {
		values = []string{"."}
	}
	var out []server.Workspace
	for _, v := range values {
		name, dir, named := strings.Cut(v, "=")
		if !named || strings.ContainsRune(name, os.PathSeparator) {
			name, dir = "", v
		}
		if named && !validName(name) {
			return nil, fmt.Errorf("--workspace %q: a name is letters, digits, '-', '_' or '.'", v)
		}
		if dir == "" {
			return nil, fmt.Errorf("--workspace %q: no directory", v)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("--workspace %q: %w", v, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("--workspace %q: %w", v, err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("--workspace %q: not a directory", v)
		}
		if name == "" && len(values) > 1 {
			name = filepath.Base(abs)
		}
		out = append(out, server.Workspace{Name: name, Dir: abs})
	}
	return out, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
