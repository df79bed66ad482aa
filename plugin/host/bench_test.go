package host

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// The in-process and plugin benchmarks run the same command through the
// same backend code (internal/direct): the difference is the plugin hop.
var (
	tinyRequest   = sandbox.Request{Command: "true", Stdin: []byte(`{"hook":"provider","phase":"before_call"}`)}
	oneMiBRequest = sandbox.Request{Command: "head", Args: []string{"-c", "1048576", "/dev/zero"}}
)

// benchSpawn times sb's calls of req, and reports beside the time what
// they cost in CPU (cpu-µs/op): this process's, its reaped children's,
// and that of the children still running (a plugin). A busy machine
// stretches a call's time but hardly its CPU, so cpu-µs/op compares
// designs where ns/op is noise.
func benchSpawn(b *testing.B, sb sandbox.Sandbox, req sandbox.Request, wantOut int) {
	b.Helper()
	ctx := context.Background()
	before := cpuOfTree(b)
	b.ResetTimer()
	for b.Loop() {
		resp, err := sb.Spawn(ctx, req)
		if err != nil || len(resp.Stdout) != wantOut {
			b.Fatalf("spawn: %d bytes, %v", len(resp.Stdout), err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuOfTree(b)-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuOfTree is the CPU time this process, its reaped children and its
// running children have used.
func cpuOfTree(b *testing.B) time.Duration {
	b.Helper()
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		b.Fatal(err)
	}
	used := time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
	for _, p := range supervisor.Processes() {
		if p.PPID == os.Getpid() {
			if cpu, ok := proctest.CPU(p.PID); ok {
				used += cpu
			}
		}
	}
	return used
}

// benchPlugin opens mode of the test plugin installed as name.
func benchPlugin(b *testing.B, name, mode string) sandbox.Sandbox {
	b.Helper()
	dir := b.TempDir()
	install(b, testPlugin, dir, "promptkit-sandbox-"+name+"_v1.0.0")
	h := newHost(b, Options{Dirs: []string{dir}})
	return open(b, h, config.Sandbox{Mode: name + "_" + mode})
}

func benchPluginSandbox(b *testing.B) sandbox.Sandbox { return benchPlugin(b, "test", "direct") }

func BenchmarkSpawnInProcess(b *testing.B) {
	benchSpawn(b, direct.New("bench", shell.Options{}), tinyRequest, 0)
}

func BenchmarkSpawnPlugin(b *testing.B) {
	benchSpawn(b, benchPluginSandbox(b), tinyRequest, 0)
}

// BenchmarkSpawnPluginSpawnStreams is BenchmarkSpawnPlugin against a
// plugin that predates the Calls stream: each call a stream of its own.
func BenchmarkSpawnPluginSpawnStreams(b *testing.B) {
	benchSpawn(b, benchPlugin(b, "legacy", "direct"), tinyRequest, 0)
}

func BenchmarkSpawnInProcess1MiB(b *testing.B) {
	benchSpawn(b, direct.New("bench", shell.Options{}), oneMiBRequest, 1<<20)
}

func BenchmarkSpawnPlugin1MiB(b *testing.B) {
	benchSpawn(b, benchPluginSandbox(b), oneMiBRequest, 1<<20)
}

// BenchmarkPluginColdStart measures what the first hook call through a
// plugin costs: scan the plugin directory, launch the binary, complete the
// go-plugin handshake with per-launch mutual TLS, describe it, open the
// sandbox and run the first command. Stopping the plugin is not counted.
func BenchmarkPluginColdStart(b *testing.B) {
	dir := b.TempDir()
	install(b, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	env := emptyEnv(b)
	ctx := context.Background()
	for b.Loop() {
		h, err := New(Options{Dirs: []string{dir}, Env: env})
		if err != nil {
			b.Fatal(err)
		}
		sb, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sb.Spawn(ctx, tinyRequest); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = h.Close()
		b.StartTimer()
	}
}

// noopSandbox answers at once with its stdin: with it in process and
// NAME_noop through the plugin, the difference is the hop alone.
type noopSandbox struct{}

func (noopSandbox) Name() string { return "noop" }

func (noopSandbox) Spawn(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	return sandbox.Response{Stdout: req.Stdin}, nil
}

func BenchmarkHopInProcess(b *testing.B) {
	benchSpawn(b, noopSandbox{}, tinyRequest, len(tinyRequest.Stdin))
}

func BenchmarkHopPlugin(b *testing.B) {
	benchSpawn(b, benchPlugin(b, "test", "noop"), tinyRequest, len(tinyRequest.Stdin))
}

func BenchmarkHopPluginSpawnStreams(b *testing.B) {
	benchSpawn(b, benchPlugin(b, "legacy", "noop"), tinyRequest, len(tinyRequest.Stdin))
}
