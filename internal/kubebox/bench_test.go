package kubebox

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The benchmarks run the same command (cat of a small stdin) in the same
// pod of the loopback API server, whose exec runs it in a real container.
var benchStdin = []byte(`{"hook":"bench","payload":"a small request"}`)

// BenchmarkKubectlExecCLI is the reference behaviour: the kubectl binary
// per call, `kubectl exec -i POD -c CONTAINER -- cat`.
func BenchmarkKubectlExecCLI(b *testing.B) {
	c := startBenchCluster(b)
	path, err := exec.LookPath("kubectl")
	if err != nil {
		b.Fatalf("kubectl: %v", err)
	}
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(path, "--kubeconfig", c.kubeconfig, "exec", "-i", testPod, "-c", "hooks", "--", "cat")
		cmd.Stdin = bytes.NewReader(benchStdin)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, benchStdin) {
			b.Fatalf("kubectl exec: %v %q", err, out)
		}
	}
}

// BenchmarkKubectlExecNative is ours, default settings (transport
// native).
func BenchmarkKubectlExecNative(b *testing.B) { benchSandbox(b, TransportNative) }

// BenchmarkKubectlExecCLITransport is ours with transport cli: the
// kubectl binary per call, plus the wrapper.
func BenchmarkKubectlExecCLITransport(b *testing.B) { benchSandbox(b, TransportCLI) }

func benchSandbox(b *testing.B, transport string, kv ...any) {
	c := startBenchCluster(b)
	cfg := map[string]any{"kubeconfig": c.kubeconfig, "pod": testPod, "container": "hooks", "transport": transport}
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i].(string)] = kv[i+1]
	}
	sb, err := Factory(context.Background(), "bench", cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer sb.(*Sandbox).Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	for range b.N {
		resp, err := sb.Spawn(ctx, sandbox.Request{Command: "cat", Stdin: benchStdin})
		if err != nil || !bytes.Equal(resp.Stdout, benchStdin) {
			b.Fatalf("spawn: %v %q", err, resp.Stdout)
		}
	}
}

func startBenchCluster(b *testing.B) *testCluster {
	b.Helper()
	return startCluster(b)
}

// BenchmarkKubectlExecNativeWarm is the latency, without a resident, of a
// call that finds a warm session ready: the timer is stopped while the pool refills.
func BenchmarkKubectlExecNativeWarm(b *testing.B) {
	c := startBenchCluster(b)
	sb, err := Factory(context.Background(), "bench", map[string]any{"kubeconfig": c.kubeconfig, "pod": testPod, "container": "hooks", "resident": false})
	if err != nil {
		b.Fatal(err)
	}
	s := sb.(*Sandbox)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		awaitWarm(ctx, s)
		b.StartTimer()
		resp, err := s.Spawn(ctx, sandbox.Request{Command: "cat", Stdin: benchStdin})
		if err != nil || !bytes.Equal(resp.Stdout, benchStdin) {
			b.Fatalf("spawn: %v %q", err, resp.Stdout)
		}
	}
}

// BenchmarkKubectlExecNativeCold is ours with no resident and warm: 0:
// every call opens its own exec.
func BenchmarkKubectlExecNativeCold(b *testing.B) {
	benchSandbox(b, TransportNative, "resident", false, "warm", 0)
}

// BenchmarkKubectlExecNativeNoResident is ours with resident: false: an
// exec session per call, with warm sessions.
func BenchmarkKubectlExecNativeNoResident(b *testing.B) {
	benchSandbox(b, TransportNative, "resident", false)
}
