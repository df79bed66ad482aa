package dockerbox

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The benchmarks compare the sandbox with what the reference backends do,
// on the same image and command: cat of a small stdin. Compare them as
// ratios within one run (go test -run '^$' -bench Docker -count 5).

var benchStdin = []byte(`{"request":{"ProviderID":"openai","Model":"gpt-4o"}}`)

func benchCLI(b *testing.B, args ...string) {
	b.Helper()
	for b.Loop() {
		cmd := exec.Command("docker", args...)
		cmd.Stdin = bytes.NewReader(benchStdin)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, benchStdin) {
			b.Fatalf("docker %v: %v: %q", args, err, out)
		}
	}
}

func benchSandbox(b *testing.B, sb sandbox.Sandbox) {
	b.Helper()
	req := sandbox.Request{Command: "cat", Stdin: benchStdin, Timeout: time.Minute}
	for b.Loop() {
		resp, err := sb.Spawn(context.Background(), req)
		if err != nil || !bytes.Equal(resp.Stdout, benchStdin) {
			b.Fatalf("Spawn: %v: %q %q", err, resp.Stdout, resp.Stderr)
		}
	}
}

func benchOpen(b *testing.B, factory sandbox.Factory, cfg map[string]any) sandbox.Sandbox {
	b.Helper()
	sb, err := factory(context.Background(), "bench", cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.(sandbox.Closer).Close() })
	return sb
}

// benchContainer starts a long-lived container for the exec benchmarks.
func benchContainer(b *testing.B) string {
	b.Helper()
	img := dockertest.Image(b, dockertest.Busybox)
	out, err := exec.Command("docker", "run", "-d", "--rm", "--init", "--network", "none",
		"--label", "org.promptkit.test.bench=1", img, "sleep", "3600").Output()
	if err != nil {
		b.Fatalf("start container: %v", err)
	}
	id := string(bytes.TrimSpace(out))
	b.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

// BenchmarkDockerRunCLI is the reference docker_run: docker run --rm -i.
func BenchmarkDockerRunCLI(b *testing.B) {
	dockertest.Require(b)
	benchCLI(b, "run", "--rm", "-i", dockertest.Image(b, dockertest.Busybox), "cat")
}

// BenchmarkDockerRun is docker_run with the default settings.
func BenchmarkDockerRun(b *testing.B) {
	dockertest.Require(b)
	benchSandbox(b, benchOpen(b, RunFactory, map[string]any{"image": dockertest.Image(b, dockertest.Busybox)}))
}

// BenchmarkDockerRunPool is docker_run with a warm pool, still one fresh
// container per call: the latency of a call that finds a warm container,
// which is what the pool is for. Between calls the timer stops until the
// pool has a container ready again (BenchmarkDockerRunPoolSustained is
// back-to-back calls, where the engine's container start rate is the
// limit).
func BenchmarkDockerRunPool(b *testing.B) {
	dockertest.Require(b)
	const size = 2
	sb := benchOpen(b, RunFactory, map[string]any{"image": dockertest.Image(b, dockertest.Busybox), "pool": size})
	warmPool(b, sb.(*RunSandbox), size)
	req := sandbox.Request{Command: "cat", Stdin: benchStdin, Timeout: time.Minute}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		waitReady(b, sb.(*RunSandbox), 1)
		b.StartTimer()
		resp, err := sb.Spawn(context.Background(), req)
		if err != nil || !bytes.Equal(resp.Stdout, benchStdin) {
			b.Fatalf("Spawn: %v: %q %q", err, resp.Stdout, resp.Stderr)
		}
	}
}

// BenchmarkDockerRunPoolSustained is BenchmarkDockerRunPool with calls
// back to back: after the first 8, calls come as fast as the pool refills.
func BenchmarkDockerRunPoolSustained(b *testing.B) {
	dockertest.Require(b)
	const size = 8
	sb := benchOpen(b, RunFactory, map[string]any{"image": dockertest.Image(b, dockertest.Busybox), "pool": size})
	warmPool(b, sb.(*RunSandbox), size)
	benchSandbox(b, sb)
}

// warmPool makes the pool's first call and waits until it holds size
// ready containers.
func warmPool(b *testing.B, sb *RunSandbox, size int) {
	b.Helper()
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "cat", Stdin: benchStdin, Timeout: time.Minute})
	if err != nil {
		b.Fatalf("first call: %v (%q)", err, resp.Stderr)
	}
	waitReady(b, sb, size)
}

// waitReady waits until the pool holds n ready containers.
func waitReady(b *testing.B, sb *RunSandbox, n int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for sb.pool.Ready() < n {
		if time.Now().After(deadline) {
			b.Fatalf("pool holds %d of %d containers after a minute", sb.pool.Ready(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkDockerExecCLI is the reference docker_exec: docker exec -i.
func BenchmarkDockerExecCLI(b *testing.B) {
	dockertest.Require(b)
	benchCLI(b, "exec", "-i", benchContainer(b), "cat")
}

// BenchmarkDockerExec is docker_exec with the default settings: its calls
// go through the resident.
func BenchmarkDockerExec(b *testing.B) {
	dockertest.Require(b)
	benchSandbox(b, benchOpen(b, ExecFactory, map[string]any{"container": benchContainer(b)}))
}

// BenchmarkDockerExecPlugin is BenchmarkDockerExec through the docker
// plugin binary, as the host runs it: the difference is the plugin hop
// (issue 32's target: at most 1.10x BenchmarkDockerExec).
func BenchmarkDockerExecPlugin(b *testing.B) {
	dockertest.Require(b)
	dir := buildPlugin(b)
	h, err := host.New(host.Options{Dirs: []string{dir}, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	sb, err := h.Open(config.Sandbox{Name: "bench", Mode: ExecMode, Config: map[string]any{"container": benchContainer(b)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.(sandbox.Closer).Close() })
	benchSandbox(b, sb)
}

// BenchmarkDockerExecNoResident is docker_exec with resident: false: an
// exec session of the engine's per call.
func BenchmarkDockerExecNoResident(b *testing.B) {
	dockertest.Require(b)
	benchSandbox(b, benchOpen(b, ExecFactory, map[string]any{"container": benchContainer(b), "resident": false}))
}

// BenchmarkDockerExecWarm is the latency, without a resident, of a call
// that finds a warm exec (the default keeps 2 per command): between calls
// the timer stops until the pool is full again.
func BenchmarkDockerExecWarm(b *testing.B) {
	dockertest.Require(b)
	sb := benchOpen(b, ExecFactory, map[string]any{"container": benchContainer(b), "resident": false}).(*ExecSandbox)
	req := sandbox.Request{Command: "cat", Stdin: benchStdin, Timeout: time.Minute}
	if _, err := sb.Spawn(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		deadline := time.Now().Add(time.Minute)
		for ready, _ := sb.eng.Warm(); ready < DefaultWarm; ready, _ = sb.eng.Warm() {
			if time.Now().After(deadline) {
				b.Fatal("warm execs not ready after a minute")
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.StartTimer()
		resp, err := sb.Spawn(context.Background(), req)
		if err != nil || !bytes.Equal(resp.Stdout, benchStdin) {
			b.Fatalf("Spawn: %v: %q %q", err, resp.Stdout, resp.Stderr)
		}
	}
}
