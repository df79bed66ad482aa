package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// These tests run the test binary itself as a plugin: Serve is only
// observable from a process of its own.
const envServe = "PLUGIN_TEST_SERVE"

func TestMain(m *testing.M) {
	// A plugin's direct calls are contained by starts of its binary,
	// this one.
	supervisor.Init()
	switch os.Getenv(envServe) {
	case "":
		os.Exit(m.Run())
	case "bad":
		Serve(ServeOpts{Name: "testplug", Version: "v1", Modes: map[string]sandbox.Factory{"direct": nil}})
	default:
		Serve(ServeOpts{
			Name:    "testplug",
			Version: "1.2.3",
			Modes: map[string]sandbox.Factory{
				"direct": direct.Factory,
				"marker": markerFactory,
			},
		})
	}
	os.Exit(0)
}

// markerSandbox writes its file when closed, so a test can see that the
// plugin closed it on the way out.
type markerSandbox struct{ name, path string }

func (m markerSandbox) Name() string { return m.name }
func (m markerSandbox) Spawn(context.Context, sandbox.Request) (sandbox.Response, error) {
	return sandbox.Response{}, nil
}
func (m markerSandbox) Close() error { return os.WriteFile(m.path, []byte("closed"), 0o600) }

func markerFactory(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	var c struct {
		Path string `json:"path"`
	}
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return nil, err
	}
	return markerSandbox{name: name, path: c.Path}, nil
}

// pluginCmd runs the test binary as a plugin, with an environment free
// of anything this test process inherited from a plugin host.
func pluginCmd(t testing.TB, mode string, env ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != Handshake.MagicCookieKey && k != EnvTLSFD && k != EnvDebug {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, envServe+"="+mode)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func TestServeRunByHand(t *testing.T) {
	cmd := pluginCmd(t, "ok")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	want := `This is promptkit-sandbox plugin "testplug", version 1.2.3 (modes: direct, marker).
It is started by promptkit-sandbox, not run by hand: put it in a plugin
directory (such as ~/.local/share/promptkit/plugins, or one given with
--plugin-dir) and declare a sandbox with one of its modes.
To debug it, run it with PROMPTKIT_PLUGIN_DEBUG=1 and follow the instructions it prints.
`
	if stderr.String() != want || stdout.Len() != 0 {
		t.Fatalf("stderr:\n%s\nstdout: %q", stderr.String(), stdout.String())
	}
}

func TestServeRefusesPlaintext(t *testing.T) {
	cmd := pluginCmd(t, "ok", Handshake.MagicCookieKey+"="+Handshake.MagicCookieValue)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	if !strings.Contains(stderr.String(), `"@level":"error"`) || !strings.Contains(stderr.String(), "refusing to serve in plaintext") {
		t.Fatalf("stderr: %s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Fatalf("a handshake line was printed: %q", stdout.String())
	}
}

func TestServeMisconfigured(t *testing.T) {
	out, err := pluginCmd(t, "bad").CombinedOutput()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	want := `promptkit-sandbox plugin "testplug" is misconfigured (a bug in the plugin):
version "v1": want a semantic version such as 1.2.3 (no leading v)
mode "direct": nil factory
`
	if strings.Replace(string(out), "1.2.0", "1.2.3", 1) != want {
		t.Fatalf("output:\n%s", out)
	}
}

// syncBuffer is a log sink the test can read while go-plugin writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// launch starts the test binary the way a host does: go-plugin, the
// launch TLS on a pipe, the log level in the environment.
func launch(t testing.TB, logs io.Writer) (*goplugin.Client, *Client) {
	t.Helper()
	lt, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	cmd := pluginCmd(t, "ok", EnvLogLevel+"=debug")
	// go-plugin adds the whole environment itself.
	env := cmd.Env
	cmd.Env = nil
	if err := lt.Attach(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, env...)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: PluginSet(),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Cmd:              cmd,
		TLSConfig:        lt.HostConfig(),
		SkipHostEnv:      true,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug, Name: "host"}),
	})
	proto, err := client.Client()
	lt.Close()
	if err != nil {
		client.Kill()
		t.Fatal(err)
	}
	raw, err := proto.Dispense(PluginKey)
	if err != nil {
		client.Kill()
		t.Fatal(err)
	}
	return client, raw.(*Client)
}

func TestServeThroughGoPlugin(t *testing.T) {
	logs := &syncBuffer{}
	client, rpc := launch(t, logs)
	defer client.Kill()
	ctx := context.Background()
	d, err := rpc.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "testplug" || d.Version != "1.2.3" || len(d.Modes) != 2 {
		t.Fatalf("Describe: %+v", d)
	}
	rs, err := rpc.Open(ctx, "echo", "direct", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rs.Spawn(ctx, sandbox.Request{Command: "cat", Stdin: []byte("through a real plugin")})
	if err != nil || string(resp.Stdout) != "through a real plugin" {
		t.Fatalf("Spawn: %q %v", resp.Stdout, err)
	}
	marker := filepath.Join(t.TempDir(), "closed")
	if _, err := rpc.Open(ctx, "pool", "marker", map[string]any{"path": marker}); err != nil {
		t.Fatal(err)
	}
	pid := client.ReattachConfig().Pid

	// Shutdown closes what is still open before the process exits.
	client.Kill()
	if b, err := os.ReadFile(marker); err != nil || string(b) != "closed" {
		t.Fatalf("open sandbox not closed at shutdown: %q %v", b, err)
	}
	waitGone(t, pid, 3*time.Second)
	// The plugin's JSON logs reach the host's logger at their own level.
	if !regexp.MustCompile(`\[DEBUG\] host\.plugin\.test: sandbox opened: .*mode=marker`).MatchString(logs.String()) {
		t.Errorf("plugin log lines missing from the host's logger:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "plugin failed to exit gracefully") {
		t.Errorf("the plugin had to be killed:\n%s", logs.String())
	}
}

func TestServeStopsOnSIGTERM(t *testing.T) {
	client, rpc := launch(t, io.Discard)
	defer client.Kill()
	marker := filepath.Join(t.TempDir(), "closed")
	if _, err := rpc.Open(context.Background(), "pool", "marker", map[string]any{"path": marker}); err != nil {
		t.Fatal(err)
	}
	pid := client.ReattachConfig().Pid
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !client.Exited() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !client.Exited() {
		t.Fatal("the plugin did not exit on SIGTERM")
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "closed" {
		t.Fatalf("open sandbox not closed on SIGTERM: %q %v", b, err)
	}
}

func TestServeDebugMode(t *testing.T) {
	cmd := pluginCmd(t, "ok", EnvDebug+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	var printed []string
	for len(printed) < 4 && lines.Scan() {
		printed = append(printed, lines.Text())
	}
	if len(printed) != 4 || !strings.HasPrefix(printed[0], EnvReattach+"='") || !strings.HasPrefix(printed[1], "# promptkit-sandbox plugin testplug 1.2.3 is serving in debug mode") {
		t.Fatalf("printed %q; stderr %s", printed, stderr.String())
	}
	rcs, err := ParseReattach(strings.TrimPrefix(printed[0], EnvReattach+"="))
	if err != nil {
		t.Fatal(err)
	}
	rc := rcs["testplug"]
	if rc == nil || rc.Pid != cmd.Process.Pid || rc.Addr.Network() != "unix" {
		t.Fatalf("reattach config %+v", rc)
	}
	sockDir := filepath.Dir(rc.Addr.String())
	if fi, err := os.Stat(sockDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %s: %v %v", sockDir, fi.Mode(), err)
	}

	marker := filepath.Join(t.TempDir(), "closed")
	for range 2 { // a host attaches, leaves, and another attaches
		client := goplugin.NewClient(&goplugin.ClientConfig{
			HandshakeConfig:  Handshake,
			Plugins:          PluginSet()[ProtocolVersion],
			AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
			Reattach:         rc,
			Logger:           hclog.NewNullLogger(),
		})
		proto, err := client.Client()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Dispense(PluginKey)
		if err != nil {
			t.Fatal(err)
		}
		rpc := raw.(*Client)
		if _, err := rpc.Open(context.Background(), "pool", "marker", map[string]any{"path": marker}); err != nil {
			t.Fatal(err)
		}
		// Kill leaves a reattached plugin alone, connection included;
		// ClientProtocol.Close would ask the plugin to shut down. To only
		// disconnect, close the connection.
		client.Kill()
		_ = proto.(*goplugin.GRPCClient).Conn.Close()
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the debug plugin died with its host: %v", err)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "closed" {
		t.Fatalf("open sandboxes not closed on exit: %q %v", b, err)
	}
	if _, err := os.Stat(sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket directory left behind: %v", err)
	}
}

// BenchmarkLaunch is a plugin's cold start as a host sees it: go-plugin
// starts the process (here the test binary, larger than a real plugin),
// TLS is set up, Describe answers. The baseline, measured in the same
// run, is the same binary started and run to its exit without serving
// (it stops at ServeOpts validation): the difference is what serving
// costs before the first call.
func BenchmarkLaunch(b *testing.B) {
	var started, baseline time.Duration
	for b.Loop() {
		start := time.Now()
		_ = pluginCmd(b, "bad").Run()
		baseline += time.Since(start)

		start = time.Now()
		client, rpc := launch(b, io.Discard)
		if _, err := rpc.Describe(context.Background()); err != nil {
			b.Fatal(err)
		}
		started += time.Since(start)
		client.Kill()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(started), "ms-to-first-call")
	b.ReportMetric(ms(baseline), "ms-exec-baseline")
	b.ReportMetric(ms(started-baseline), "ms-serving-overhead")
}
