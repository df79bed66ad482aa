package host

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin/internal/rawhop"
)

// startRawHop runs the test plugin binary as a raw hop
// (TESTPLUGIN_RAWHOP_SOCKET): the same direct backend in a second
// process, reached over a bare unix socket.
func startRawHop(b *testing.B, env ...string) *rawhop.Client {
	b.Helper()
	if testing.Short() {
		b.Skip(shortSkip)
	}
	path := filepath.Join(b.TempDir(), "hop.sock")
	// The test plugin takes its name from its file name.
	exe := filepath.Join(buildDir, "promptkit-sandbox-rawhop")
	if err := os.Link(testPlugin, exe); err != nil && !errors.Is(err, os.ErrExist) {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "TESTPLUGIN_RAWHOP_SOCKET="+path), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		conn, err := net.Dial("unix", path)
		if err == nil {
			b.Cleanup(func() { _ = conn.Close() })
			return rawhop.NewClient(conn)
		}
		if time.Now().After(deadline) {
			b.Fatalf("raw hop never listened: %v", err)
		}
	}
}

// BenchmarkSpawnRawHop is the floor under BenchmarkSpawnPlugin: the same
// command through the same backend in a second process, with nothing but
// a socket between (no gRPC, TLS or go-plugin). Its ratio to
// SpawnInProcess is what any design with backends in their own processes
// pays on this machine before a protocol adds anything.
func BenchmarkSpawnRawHop(b *testing.B) {
	benchSpawn(b, startRawHop(b), tinyRequest, 0)
}

// BenchmarkHopRawHop is the floor under BenchmarkHopPlugin: a backend
// that answers at once, in a second process behind a bare socket.
func BenchmarkHopRawHop(b *testing.B) {
	benchSpawn(b, startRawHop(b, "TESTPLUGIN_RAWHOP_NOOP=1"), tinyRequest, len(tinyRequest.Stdin))
}
