package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
)

// closeGrace bounds serve's shutdown after the calls have ended: closing
// the sandboxes (a pool's containers removed) and stopping the plugins.
const closeGrace = 30 * time.Second

// serve opens a config's sandboxes once and runs exec calls in them until
// SIGINT or SIGTERM, so warm pools and residents serve every call instead
// of being built and torn down by each.
func (e *cliEnv) serve(args []string) int {
	var common commonFlags
	fs := newFlagSet("serve", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig YAML file whose sandboxes to serve (required)")
	socket := fs.String("socket", "", "unix socket to listen on (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics at /metrics on `address` (HOST:PORT; PORT or :PORT listen on 127.0.0.1); off when empty")
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		e.errorf("serve: unexpected argument %q", fs.Arg(0))
		return exitUsage
	}
	if *cfgPath == "" {
		e.errorf("serve: --config is required")
		return exitUsage
	}
	cfg, err := canonicalConfig(*cfgPath)
	if err != nil {
		e.errorf("serve: config: %v", err)
		return exitUsage
	}
	path, _ := execrelay.Socket(*socket, os.Getenv)
	log, err := common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	// Refused before the config is opened: a second serve would start
	// plugins and fill pools only to find the socket taken.
	if err := privateDir(filepath.Dir(path)); err != nil {
		e.errorf("serve: %v", err)
		return exitUsage
	}
	if err := clearStale(path, log); err != nil {
		e.errorf("serve: %v", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()

	// Deferred first, so it runs last: the plugins have sent their spans
	// by then, and ours go out after.
	tp, flushSpans := startTracing("promptkit-sandbox", log)
	defer flushSpans()
	common.telemetry.tracer = tp
	var ms *metricsServer
	if *metricsAddr != "" {
		common.telemetry.metrics = metrics.New()
		if ms, err = serveMetrics(*metricsAddr, common.telemetry.metrics, log); err != nil {
			e.errorf("serve: %v", err)
			return exitUsage
		}
		defer ms.stop()
	}

	rt, _, code := e.openRuntime(&common, *cfgPath)
	if code != exitOK {
		return code
	}
	closeRuntime := func() {
		cctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		if err := rt.Close(cctx); err != nil {
			log.Warn("closing the sandboxes", "error", err)
		}
	}
	lent, names := lentSandboxes(rt, common.telemetry.metrics)
	modes := servedModes(lent, cfg)
	providers := servedProviders(ctx, rt, cfg)
	if h, ok := rt.Plugins().(*host.Host); ok && ms != nil && len(providers) > 0 {
		if err := ms.reg.Register(newCodegenUsage(h, log.Named("metrics"))); err != nil {
			log.Warn("metrics: codegen sandboxes not exported", "error", err)
		}
	}
	for m := range providers {
		delete(modes, m)
	}
	srv, err := plugin.NewServer(plugin.ServeOpts{Name: "serve", Version: serveVersion(version), Modes: modes, Providers: providers, Logger: log.Named("serve"), TracerProvider: tp})
	if err != nil {
		closeRuntime()
		e.errorf("serve: %v", err)
		return exitSandbox
	}
	lis, err := listenServe(path, log)
	if err != nil {
		closeRuntime()
		e.errorf("serve: %v", err)
		if errors.Is(err, errServeRunning) {
			return exitUsage
		}
		return exitSandbox
	}
	relay := newRelayServer(cfg, path, lent, names, tp, log.Named("relay"))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(newSplitListener(lis, relay.serveConn, log)) }()
	if ms != nil {
		log.Info("serving metrics", "url", ms.url())
	}
	log.Info("serving", "socket", path, "config", cfg, "sandboxes", strings.Join(names, ","))

	code = exitOK
	select {
	case <-ctx.Done():
		log.Info("stopping: calls in flight are cancelled, sandboxes closed")
	case err := <-served:
		log.Error("serving stopped", "error", err)
		code = exitSandbox
	}
	// Stop closes the listener, which removes the socket, and ends the
	// calls in flight, whose sandboxes kill what they started.
	relay.end()
	srv.Stop(plugin.ShutdownGrace)
	relay.wait(plugin.ShutdownGrace)
	closeRuntime()
	return code
}

// serveVersion is the version serve reports in Describe, which wants a
// semantic version: a development build's "dev" is 0.0.0-dev.
func serveVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	if v == "" || v == "dev" || !strings.Contains(v, ".") {
		return "0.0.0-dev"
	}
	return v
}
