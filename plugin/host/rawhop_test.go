package host

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// rawHopSandbox sends each request to the test plugin binary running as
// a raw hop (TESTPLUGIN_RAWHOP_SOCKET): the same direct backend in a
// second process, reached over a bare unix socket with length-prefixed
// JSON. Nothing of the plugin protocol is in the way, so what it costs
// over in-process is the floor for any design that runs backends in
// their own processes, measured on the machine in hand.
type rawHopSandbox struct {
	conn net.Conn
	r    *bufio.Reader
}

type rawHopRequest struct {
	Command string
	Args    []string
	Stdin   []byte
}

type rawHopResponse struct {
	Stdout, Stderr []byte
	Err            string
}

func startRawHop(b *testing.B) *rawHopSandbox {
	b.Helper()
	path := filepath.Join(b.TempDir(), "hop.sock")
	cmd := exec.Command(filepath.Join(buildDir, "promptkit-sandbox-rawhop"))
	if err := os.Link(testPlugin, cmd.Path); err != nil && !errors.Is(err, os.ErrExist) {
		b.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "TESTPLUGIN_RAWHOP_SOCKET="+path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// Closing the connection ends the hop; Kill is for a hop that
		// never got one.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var conn net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("unix", path)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("raw hop never listened: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return &rawHopSandbox{conn: conn, r: bufio.NewReader(conn)}
}

func (s *rawHopSandbox) Name() string { return "rawhop" }

func (s *rawHopSandbox) Spawn(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	body, err := json.Marshal(rawHopRequest{Command: req.Command, Args: req.Args, Stdin: req.Stdin})
	if err != nil {
		return sandbox.Response{}, err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	if _, err := s.conn.Write(append(frame, body...)); err != nil {
		return sandbox.Response{}, err
	}
	var n uint32
	if err := binary.Read(s.r, binary.BigEndian, &n); err != nil {
		return sandbox.Response{}, err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(s.r, buf); err != nil {
		return sandbox.Response{}, err
	}
	var resp rawHopResponse
	if err := json.Unmarshal(buf, &resp); err != nil {
		return sandbox.Response{}, err
	}
	if resp.Err != "" {
		return sandbox.Response{}, fmt.Errorf("raw hop: %s", resp.Err)
	}
	return sandbox.Response{Stdout: resp.Stdout, Stderr: resp.Stderr}, nil
}

// BenchmarkSpawnRawHop is the floor under BenchmarkSpawnPlugin: the same
// command through the same backend in a second process, with nothing but
// a socket between (no gRPC, TLS or go-plugin).
func BenchmarkSpawnRawHop(b *testing.B) {
	benchSpawn(b, startRawHop(b), tinyRequest, 0)
}
