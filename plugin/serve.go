package plugin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// ShutdownGrace bounds how long a stopping plugin waits, in all, for the
// calls it was serving to wind down and the sandboxes still open to close
// before it exits. (go-plugin's Client.Kill on the host gives a plugin 2 s
// before it kills the process.)
const ShutdownGrace = 5 * time.Second

// ServeOpts describe a plugin to Serve.
type ServeOpts struct {
	// Name is the plugin's name, as in its file name
	// promptkit-sandbox-NAME ("docker").
	Name string
	// Version is its semantic version without a leading "v" ("1.2.0");
	// the host refuses a plugin whose file name says otherwise.
	Version string
	// Modes maps each mode served to the factory that builds its
	// sandboxes. A sandbox that implements sandbox.Closer is closed when
	// the host closes it or the plugin stops; one whose output cap is not
	// sandbox.DefaultOutputLimit must implement OutputLimiter.
	Modes map[string]sandbox.Factory
	// ConfigKeys optionally lists each mode's configuration keys, which
	// Describe reports.
	ConfigKeys map[string][]string
	// Descriptions optionally gives each mode a one-line description,
	// which Describe reports.
	Descriptions map[string]string
	// Providers maps each provider mode served to its Provider: modes
	// that hand out MCP endpoints (the Provider service) instead of
	// running commands. Describe marks them; ConfigKeys and Descriptions
	// may describe them too. A name is a mode or a provider, not both.
	Providers map[string]Provider
	// Logger receives the plugin's logs. The default writes JSON to
	// stderr, which go-plugin forwards to the host's logger, at the level
	// in EnvLogLevel (default info).
	Logger hclog.Logger
	// TracerProvider makes a span of each Spawn served, a child of the
	// host's span (whose trace context comes in the call's gRPC
	// metadata); a backend starts its own under it (see
	// shared/tracing). Nil: Serve builds one that exports over
	// OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set in the plugin's
	// environment (the host passes its own OTEL_* variables on), and
	// makes no spans otherwise; NewServer makes none.
	TracerProvider trace.TracerProvider
	// SpawnStreamsOnly serves as plugins did before the Calls stream:
	// every call on a Spawn stream of its own, as hosts that predate
	// Calls ask. It is for testing hosts against such plugins, and a way
	// out should the shared stream ever misbehave.
	SpawnStreamsOnly bool
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func (o ServeOpts) validate() error {
	var errs []error
	if o.Name == "" || strings.ContainsAny(o.Name, " \t\n/\\") {
		errs = append(errs, fmt.Errorf("name %q: want a plugin name such as \"docker\"", o.Name))
	}
	if !semver.MatchString(o.Version) {
		errs = append(errs, fmt.Errorf("version %q: want a semantic version such as 1.2.0 (no leading v)", o.Version))
	}
	if len(o.Modes) == 0 && len(o.Providers) == 0 {
		errs = append(errs, errors.New("no modes: a plugin serves at least one"))
	}
	for _, m := range slices.Sorted(maps.Keys(o.Providers)) {
		switch {
		case m == "":
			errs = append(errs, errors.New("a provider mode with an empty name"))
		case o.Providers[m] == nil:
			errs = append(errs, fmt.Errorf("provider mode %q: nil provider", m))
		case o.Modes[m] != nil:
			errs = append(errs, fmt.Errorf("%q is both a mode and a provider mode", m))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(o.Modes)) {
		if m == "" {
			errs = append(errs, errors.New("a mode with an empty name"))
		}
		if o.Modes[m] == nil {
			errs = append(errs, fmt.Errorf("mode %q: nil factory", m))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(o.ConfigKeys)) {
		if !o.serves(m) {
			errs = append(errs, fmt.Errorf("config keys for %q, which is not a mode", m))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(o.Descriptions)) {
		if !o.serves(m) {
			errs = append(errs, fmt.Errorf("description for %q, which is not a mode", m))
		}
	}
	return errors.Join(errs...)
}

// serves reports whether m is a mode or a provider mode of o.
func (o ServeOpts) serves(m string) bool {
	_, mode := o.Modes[m]
	_, provider := o.Providers[m]
	return mode || provider
}

// allModes are the sandbox and provider modes of o, sorted.
func (o ServeOpts) allModes() []string {
	names := append(slices.Collect(maps.Keys(o.Modes)), slices.Collect(maps.Keys(o.Providers))...)
	slices.Sort(names)
	return names
}

// Serve runs a plugin: it is the whole of a plugin's main. It serves the
// modes to the promptkit-sandbox host that started the process, over
// gRPC with mutual TLS, until the host stops it (or SIGTERM); then it
// lets the calls in flight wind down, closes every sandbox still open,
// within ShutdownGrace in all, and returns.
//
// Run by hand, it explains what it is and exits with status 1. With
// PROMPTKIT_PLUGIN_DEBUG=1 it serves without a host instead, for a
// debugger: see EnvDebug. Invalid options are the plugin author's bug:
// Serve says what is wrong and exits with status 1.
func Serve(opts ServeOpts) {
	if code := serve(opts); code != 0 {
		os.Exit(code)
	}
}

func serve(opts ServeOpts) int {
	if err := opts.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "promptkit-sandbox plugin %q is misconfigured (a bug in the plugin):\n%v\n", opts.Name, err)
		return 1
	}
	log := opts.Logger
	if log == nil {
		log = DefaultLogger()
	}
	if opts.TracerProvider == nil {
		tp, err := tracing.NewProviderFromEnv(context.Background(), "promptkit-sandbox-"+opts.Name, opts.Version, os.Getenv)
		if err != nil {
			log.Warn("tracing is off", "error", err)
		}
		if tp != nil {
			opts.TracerProvider = tp
			defer flushSpans(tp, log)
		}
	}
	closeExecFD()
	socket, socketErr := takeCallsSocket()
	sealInheritedFDs()
	srv := newServer(opts, log)
	if socketErr != nil {
		// Calls go over gRPC then, as with a host that passes none.
		log.Warn("calls socket refused", "error", socketErr)
	}
	if socket != nil {
		if opts.SpawnStreamsOnly {
			_ = socket.Close()
		} else {
			srv.socket = newFrameConn(socket)
			go srv.serveCallsSocket()
		}
	}
	if debugMode(os.Getenv(EnvDebug)) {
		return serveDebug(opts, srv, log)
	}
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		fmt.Fprint(os.Stderr, notAHostMessage(opts))
		return 1
	}
	tlsConfig, err := loadLaunchTLS()
	if err != nil {
		// JSON on stderr, so the host shows it at ERROR.
		log.Error("cannot serve", "error", err)
		return 1
	}

	// A host that died leaves our stdout and stderr (its pipes) broken:
	// the Go runtime would end the process at the first log line written
	// there with SIGPIPE, before it could kill and remove what its calls
	// run. Notified, a write to them just fails.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)

	// SIGTERM stops serving the way the host's shutdown does, so open
	// sandboxes are closed before the process exits. (go-plugin ignores
	// SIGINT: a Ctrl-C reaches the whole process group, and the host
	// decides what its plugins do.)
	var grpcServer atomic.Pointer[grpc.Server]
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	served := make(chan struct{})
	defer close(served)
	go func() {
		select {
		case <-term:
		case <-served:
			return
		}
		log.Info("SIGTERM: stopping")
		removeSocketDir() // no new connection is wanted now
		if s := grpcServer.Load(); s != nil {
			s.Stop()
			return
		}
		os.Exit(128 + int(syscall.SIGTERM)) // nothing is open yet
	}()

	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: pluginSet(srv),
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(append(o, serverOptions()...)...)
			grpcServer.Store(s)
			return s
		},
		TLSProvider: func() (*tls.Config, error) { return tlsConfig, nil },
		Logger:      log,
	})
	srv.shutdown(ShutdownGrace)
	removeSocketDir()
	return 0
}

// spanFlushTimeout bounds sending the spans still held at exit: the
// host's go-plugin kills a plugin 2 s after asking it to stop.
const spanFlushTimeout = time.Second

// flushSpans sends what tp still holds and stops it.
func flushSpans(tp *sdktrace.TracerProvider, log hclog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), spanFlushTimeout)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("sending the last spans", "error", err)
	}
}

// closeExecFD closes the descriptor EnvExecFD names, once it is sure the
// descriptor is this process's own binary: a wrong number closes nothing.
func closeExecFD() {
	v, ok := os.LookupEnv(EnvExecFD)
	if !ok {
		return
	}
	os.Unsetenv(EnvExecFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	var inherited, self syscall.Stat_t
	if syscall.Fstat(fd, &inherited) != nil || syscall.Stat("/proc/self/exe", &self) != nil {
		return
	}
	if inherited.Dev == self.Dev && inherited.Ino == self.Ino {
		_ = syscall.Close(fd)
	}
}

// sealInheritedFDs marks every descriptor from 3 up close-on-exec, so
// that what the host's own parent leaked to it, and it to us, reaches
// no command a plugin runs. The ones the host passed on purpose are
// taken or closed by then (the TLS pipe is still read after: the mark
// does not close it here).
func sealInheritedFDs() {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return
	}
	// Linux before 5.11: one at a time.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// removeSocketDir removes the directory the host made for this plugin's
// socket. The host removes it when it stops the plugin; a host that was
// SIGKILLed cannot, so the plugin does as it stops. The directory is this
// process's alone: the host made it for this start.
func removeSocketDir() {
	if dir := os.Getenv(goplugin.EnvUnixSocketDir); dir != "" {
		_ = os.RemoveAll(dir) // #nosec G703 -- the directory the host made for this plugin alone and named in go-plugin's variable (see above)
	}
}

func debugMode(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// notAHostMessage is what a person who runs a plugin binary sees.
func notAHostMessage(o ServeOpts) string {
	return fmt.Sprintf(`This is promptkit-sandbox plugin %q, version %s (modes: %s).
It is started by promptkit-sandbox, not run by hand: put it in a plugin
directory (such as ~/.local/share/promptkit/plugins, or one given with
--plugin-dir) and declare a sandbox with one of its modes.
To debug it, run it with %s=1 and follow the instructions it prints.
`, o.Name, o.Version, strings.Join(o.allModes(), ", "), EnvDebug)
}

// serveDebug serves without a host handshake and without TLS, on a unix
// socket in a fresh 0700 directory that only this user can enter, and
// prints the EnvReattach line a host needs to attach. It serves until
// SIGINT or SIGTERM; hosts that attach and go never stop it.
func serveDebug(opts ServeOpts, srv *server, log hclog.Logger) int {
	dir, err := os.MkdirTemp("", "promptkit-plugin-")
	if err != nil {
		log.Error("debug mode: socket directory", "error", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// go-plugin creates its socket in this directory; without it, in the
	// shared temporary directory.
	if err := os.Setenv(goplugin.EnvUnixSocketDir, dir); err != nil {
		log.Error("debug mode: socket directory", "error", err)
		return 1
	}
	// Nothing here may turn on go-plugin's own AutoMTLS.
	os.Unsetenv("PLUGIN_CLIENT_CERT")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reattach := make(chan *goplugin.ReattachConfig, 1)
	closed := make(chan struct{})
	served := make(chan bool, 1)
	go func() {
		select {
		case rc := <-reattach:
			served <- announce(opts, rc, log)
		case <-closed:
			served <- false
		}
	}()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: pluginSet(srv),
		GRPCServer:       goplugin.DefaultGRPCServer,
		Logger:           log,
		Test: &goplugin.ServeTestConfig{
			Context:          ctx,
			ReattachConfigCh: reattach,
			CloseCh:          closed,
		},
	})
	ok := <-served
	srv.shutdown(ShutdownGrace)
	if !ok {
		return 1
	}
	return 0
}

func announce(opts ServeOpts, rc *goplugin.ReattachConfig, log hclog.Logger) bool {
	line, err := reattachLine(opts.Name, rc)
	if err != nil {
		log.Error("debug mode: reattach configuration", "error", err)
		return false
	}
	fmt.Printf("%s\n# promptkit-sandbox plugin %s %s is serving in debug mode: no TLS, socket in a directory only this user can enter.\n"+
		"# Export the line above where promptkit-sandbox runs and it attaches to this process instead of starting the plugin.\n"+
		"# Stop it with Ctrl-C.\n", line, opts.Name, opts.Version)
	return true
}
