// Command testplugin is a promptkit-sandbox plugin for the host's own
// tests; it is never shipped. It takes its name and version from its file
// name (promptkit-sandbox-NAME_vX.Y.Z), so one build copied under several
// names stands in for several plugins, and serves, for a plugin NAME:
//
//	NAME_direct  the real direct backend (for benchmarks and cancel tests)
//	NAME_env     the direct backend with an env list of its own (key
//	             env), set in every process and reported, as docker_run's
//	             is (sandbox.EnvForwarder)
//	NAME_crash   exits the whole plugin process mid-call
//	NAME_hang    blocks until the call is cancelled
//	NAME_flood   writes Args[0] bytes of stdout without a subprocess
//	NAME_deaf    ignores its context: sleeps Args[0] (a duration), then
//	             succeeds, printing "late"
//	NAME_stuck   an Open that never returns
//	NAME_late    the direct backend behind an Open that takes open_delay
//	             and a Close that leaves a file in closed_dir
//	NAME_flaky   fails every call with a backend's transport error (an
//	             engine that did not answer), the process itself fine
//	NAME_noop    answers at once with its stdin, running nothing (for
//	             benchmarks of the hop alone)
//	shared_echo  echoes stdin; every copy serves it (for pin tests)
//
// With TESTPLUGIN_RAWHOP_SOCKET set it is no plugin at all: it answers
// direct spawns on that unix socket with bare length-prefixed JSON, for
// BenchmarkSpawnRawHop (see rawhop.go); with TESTPLUGIN_RAWHOP_NOOP set
// too, answers at once with its stdin instead (BenchmarkHopRawHop).
//
// With TESTPLUGIN_CPUPROFILE or TESTPLUGIN_TRACE set to a path, it
// writes its CPU profile or execution trace there (the path suffixed
// with its pid) for TESTPLUGIN_CPUPROFILE_FOR, a second by default: the
// plugin's side of a benchmark, for go tool pprof or go tool trace.
//
// Named stall, it prints a line to stderr and never completes the
// go-plugin handshake.
//
// Named with the prefix "legacy", it serves as plugins did before the
// Calls stream (plugin.ServeOpts.SpawnStreamsOnly): every call on a Spawn
// stream of its own.
//
// With TESTPLUGIN_STARTED_DIR set it creates a file named for its pid
// there when it starts, so tests can count and find plugin processes.
//
// With TESTPLUGIN_WEDGE=1 it runs on one thread without preemption, and
// NAME_hang wedges the whole process instead: it spins on the only
// thread, so nothing else in the plugin, its RPC server included, ever
// runs again, while the process is running, not stopped — as a plugin
// stuck in a tight loop or a deadlock would be.
//
// Build-time overrides (-ldflags -X main.NAME=VALUE): reportVersion makes
// it lie about its version; junk makes it print to stdout before the
// go-plugin handshake.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

var (
	reportVersion string
	junk          string
)

func main() {
	supervisor.Init()
	if path := os.Getenv("TESTPLUGIN_RAWHOP_SOCKET"); path != "" {
		rawHopMain(path, os.Getenv("TESTPLUGIN_RAWHOP_NOOP") != "")
	}
	name, v, err := discovery.ParseFileName(filepath.Base(os.Args[0]))
	if err != nil || name == "" {
		fmt.Fprintf(os.Stderr, "testplugin: cannot take a name from %q: %v\n", os.Args[0], err)
		os.Exit(2)
	}
	if name == "stall" {
		// A plugin that never completes its handshake, saying why on
		// stderr, as a broken one might.
		fmt.Fprintln(os.Stderr, "testplugin: waiting for a database that never answers")
		for {
			time.Sleep(time.Hour)
		}
	}
	if os.Getenv("TESTPLUGIN_WEDGE") == "1" && os.Getenv("GODEBUG") != wedgeGODEBUG {
		wedgeable()
	}
	ver := v.String()
	if reportVersion != "" {
		ver = reportVersion
	}
	if junk != "" {
		fmt.Println(junk)
	}
	if dir := os.Getenv("TESTPLUGIN_STARTED_DIR"); dir != "" {
		// #nosec G306 G703 -- a test plugin reporting its start into the directory its test names
		_ = os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), []byte(name+" "+ver), 0o644)
	}
	log := plugin.DefaultLogger()
	record("TESTPLUGIN_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)
	record("TESTPLUGIN_TRACE", trace.Start, trace.Stop)
	plugin.Serve(plugin.ServeOpts{
		SpawnStreamsOnly: strings.HasPrefix(name, "legacy"),
		Logger:           log,
		Name:             name,
		Version:          ver,
		Modes: map[string]sandbox.Factory{
			name + "_direct": direct.Factory,
			name + "_env":    openEnv,
			name + "_crash":  simple(name, crash),
			name + "_hang":   simple(name, hang),
			name + "_flood":  simple(name, flood),
			name + "_flaky":  simple(name, flaky),
			name + "_deaf":   simple(name, deaf),
			name + "_stuck":  stuckOpen,
			name + "_late":   lateOpen,
			"shared_echo":    simple(name, echo(name, log)),
			name + "_noop":   simple(name, noop),
		},
		ConfigKeys: map[string][]string{
			name + "_direct": {"timeout", "kill_grace", "output_limit", "clean_env", "workdir"},
		},
	})
}

type spawnFunc func(ctx context.Context, req sandbox.Request) (sandbox.Response, error)

type funcSandbox struct {
	name  string
	spawn spawnFunc
}

func (s funcSandbox) Name() string { return s.name }

// OutputLimit lets NAME_flood send far more than the default 16 MiB.
func (s funcSandbox) OutputLimit() int { return 128 << 20 }
func (s funcSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req)
}

// simple makes a factory for a mode that takes no configuration.
func simple(_ string, f spawnFunc) sandbox.Factory {
	return func(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
		var none struct{}
		if err := sandbox.DecodeConfig(cfg, &none); err != nil {
			return nil, err
		}
		return funcSandbox{name: name, spawn: f}, nil
	}
}

// envSandbox is NAME_env. It holds direct rather than embed it, so that
// direct's SpawnStreaming does not bypass the env.
type envSandbox struct {
	direct *direct.Sandbox
	env    []string
}

func openEnv(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	var c struct {
		Env []string `json:"env"`
	}
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return nil, err
	}
	return envSandbox{direct: direct.New(name, shell.Options{}), env: c.Env}, nil
}

func (s envSandbox) Name() string           { return s.direct.Name() }
func (s envSandbox) ForwardedEnv() []string { return s.env }

func (s envSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	req.Env = slices.Concat(s.env, req.Env)
	return s.direct.Spawn(ctx, req)
}

func crash(context.Context, sandbox.Request) (sandbox.Response, error) {
	time.Sleep(50 * time.Millisecond)
	os.Exit(3)
	return sandbox.Response{}, nil
}

func hang(ctx context.Context, _ sandbox.Request) (sandbox.Response, error) {
	if os.Getenv("GODEBUG") == wedgeGODEBUG {
		//lint:ignore SA5002 the spin is the point: it holds the only P
		for {
		}
	}
	<-ctx.Done()
	err := sandbox.ContextError(ctx, "hang", 0)
	return sandbox.Response{Err: err}, err
}

func stuckOpen(context.Context, string, map[string]any) (sandbox.Sandbox, error) {
	// #nosec G118 -- it ignores its context on purpose: it stands for a frozen backend
	for { // a factory that waits on something that never comes
		time.Sleep(time.Hour)
	}
}

func deaf(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	if len(req.Args) > 0 {
		if d, err := time.ParseDuration(req.Args[0]); err == nil {
			time.Sleep(d)
		}
	}
	return sandbox.Response{Stdout: []byte("late")}, nil
}

func flaky(context.Context, sandbox.Request) (sandbox.Response, error) {
	err := sandbox.NewError(sandbox.KindTransport, "docker engine at unix:///var/run/docker.sock is unreachable", nil)
	return sandbox.Response{Err: err}, err
}

func flood(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	n := 0
	if len(req.Args) > 0 {
		n, _ = strconv.Atoi(req.Args[0])
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = byte('a' + i%26)
	}
	return sandbox.Response{Stdout: out}, nil
}

func noop(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	return sandbox.Response{Stdout: req.Stdin}, nil
}

func echo(name string, log hclog.Logger) spawnFunc {
	return func(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
		log.Warn("echoing", "bytes", len(req.Stdin))
		return sandbox.Response{Stdout: req.Stdin, Stderr: []byte("from " + name)}, nil
	}
}

// wedgeGODEBUG turns off asynchronous preemption: a goroutine in a loop
// without calls then keeps its thread for good.
const wedgeGODEBUG = "asyncpreemptoff=1"

// wedgeable runs this program again, in place (same pid), with one
// thread for Go code and no asynchronous preemption: settings the runtime
// reads only as a process starts.
func wedgeable() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testplugin: wedge: %v\n", err)
		os.Exit(2)
	}
	env := []string{"GODEBUG=" + wedgeGODEBUG, "GOMAXPROCS=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") && !strings.HasPrefix(kv, "GOMAXPROCS=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(exe, os.Args, env) // #nosec G702 -- the test plugin re-executes itself (exe is its own executable) with its own arguments
	fmt.Fprintf(os.Stderr, "testplugin: wedge: %v\n", err)
	os.Exit(2)
}

// lateOpen is NAME_late: an open that takes open_delay whatever its
// context says, as a backend busy in a call it cannot cut short would,
// and a sandbox that runs calls as direct does and whose Close leaves a
// file named after it in closed_dir, so a test sees whether the plugin
// closed what the host gave up on.
func lateOpen(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	var c struct {
		OpenDelay sandbox.Duration `json:"open_delay"`
		ClosedDir string           `json:"closed_dir"`
	}
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return nil, err
	}
	time.Sleep(time.Duration(c.OpenDelay))
	return lateSandbox{direct: direct.New(name, shell.Options{}), closedDir: c.ClosedDir}, nil
}

// lateSandbox holds direct rather than embed it: it streams nothing, so
// a call's output reaches the host only with its result.
type lateSandbox struct {
	direct    *direct.Sandbox
	closedDir string
}

func (s lateSandbox) Name() string { return s.direct.Name() }

func (s lateSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.direct.Spawn(ctx, req)
}

func (s lateSandbox) Close() error {
	// #nosec G306 G703 -- a test plugin reporting a close into the directory its test names
	return os.WriteFile(filepath.Join(s.closedDir, s.Name()), nil, 0o644)
}

// record starts a recording (a CPU profile, an execution trace) into
// the file the variable env names, suffixed with this process's PID,
// and stops it after TESTPLUGIN_CPUPROFILE_FOR (a second by default):
// Serve ends in os.Exit, so a recording cannot wait for the end.
func record(env string, start func(io.Writer) error, stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return
	}
	// #nosec G703 -- a test plugin's recording, where its test (or benchmark) names
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil || start(f) != nil {
		return
	}
	d, err := time.ParseDuration(os.Getenv("TESTPLUGIN_CPUPROFILE_FOR"))
	if err != nil || d <= 0 {
		d = time.Second
	}
	time.AfterFunc(d, func() { stop(); _ = f.Close() })
}
