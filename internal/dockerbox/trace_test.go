package dockerbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// TestPluginTraceReachesDocker: a call made under a host span reaches the
// plugin process in its gRPC metadata, and the container run for it is a
// docker.run span under the plugin's plugin.spawn, in the host's trace,
// exported by the plugin to the collector the host's OTEL_* variables
// name.
func TestPluginTraceReachesDocker(t *testing.T) {
	img := busyboxImage(t)
	recv := otlptest.New(t)
	t.Setenv(tracing.EnvOTLPEndpoint, recv.URL)
	dir := buildPlugin(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	tp, err := tracing.NewProviderFromEnv(ctx, "host", "0.0.0", os.Getenv)
	if err != nil || tp == nil {
		t.Fatalf("NewProviderFromEnv: %v, %v", tp, err)
	}
	defer tp.Shutdown(context.Background())

	h, err := host.New(host.Options{Dirs: []string{dir}, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	name := uniqueName(t)
	cleanupNamed(t, name)
	run, err := h.Open(config.Sandbox{Name: name, Mode: RunMode, Config: map[string]any{"image": img}})
	if err != nil {
		t.Fatalf("open docker_run: %v", err)
	}
	hctx, hook := tp.Tracer("test").Start(ctx, "hook guard")
	resp, err := run.Spawn(hctx, sandbox.Request{Command: "/bin/sh", Args: []string{"-c", `echo '{"allow": true}'`}})
	hook.End()
	if err != nil || string(resp.Stdout) != "{\"allow\": true}\n" {
		t.Fatalf("docker_run: %q, %v", resp.Stdout, err)
	}
	_ = run.(sandbox.Closer).Close()
	// The plugin sends what it holds as it stops.
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	spans := recv.WaitFor(10*time.Second, "hook guard", "plugin.spawn", "docker.run")
	root, srv, backend := spans["hook guard"], spans["plugin.spawn"], spans["docker.run"]
	if root.Span == nil || srv.Span == nil || backend.Span == nil {
		t.Fatalf("spans received: %v", recv.Spans())
	}
	if srv.ParentID() != root.ID() || backend.ParentID() != srv.ID() {
		t.Errorf("parents: plugin.spawn under %s (want %s), docker.run under %s (want %s)", srv.ParentID(), root.ID(), backend.ParentID(), srv.ID())
	}
	for _, s := range []otlptest.Span{srv, backend} {
		if s.TraceID() != root.TraceID() {
			t.Errorf("%s in trace %s, want the host's %s", s.Name, s.TraceID(), root.TraceID())
		}
		if s.Service != "promptkit-sandbox-docker" {
			t.Errorf("%s exported by %q, want promptkit-sandbox-docker", s.Name, s.Service)
		}
	}
	if got := backend.Attr("promptkit.sandbox.mode"); got != RunMode {
		t.Errorf("docker.run's mode %q, want %s", got, RunMode)
	}
	assertNoContainersSoon(t, name)
}
