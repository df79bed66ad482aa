package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// harness is a plugin server and a host client in one process, over a
// unix socket with the launch TLS: the real code on both sides, without
// a plugin process.
type harness struct {
	srv    *server // nil when a fake service is served
	gs     *grpc.Server
	conn   *grpc.ClientConn
	client *Client
	exit   context.CancelFunc // what go-plugin does when the process exits
}

const testPlugin = "testplug"

// stopServing stops the server as a plugin that stops serving does: the
// gRPC server, then the calls socket (Serve's shutdown closes it).
func (h *harness) stopServing() {
	h.gs.Stop()
	if h.srv != nil && h.srv.socket != nil {
		h.srv.socket.close()
	}
}

// testModes are the modes the default harness serves.
func testModes() map[string]sandbox.Factory {
	return map[string]sandbox.Factory{
		"direct": direct.Factory,
		"fake":   fakeFactory,
	}
}

// startServer serves the real server with modes (testModes when nil).
func startServer(tb testing.TB, modes map[string]sandbox.Factory) *harness {
	tb.Helper()
	if modes == nil {
		modes = testModes()
	}
	srv := newServer(ServeOpts{
		Name:         testPlugin,
		Version:      "1.2.3",
		Modes:        modes,
		ConfigKeys:   map[string][]string{"direct": {"timeout", "kill_grace", "output_limit", "clean_env", "workdir"}},
		Descriptions: map[string]string{"direct": "runs on the host"},
	}, hclog.NewNullLogger())
	// Registered first, so it runs after the server has stopped, as in
	// Serve.
	tb.Cleanup(func() { srv.shutdown(time.Second) })
	h := startService(tb, srv)
	h.srv = srv
	attachCallsSocket(tb, h.client, srv)
	return h
}

// newCallsSocket makes a calls socket and returns the plugin's end as a
// connection, as the plugin takes it.
func newCallsSocket(tb testing.TB) (*CallsSocket, net.Conn) {
	tb.Helper()
	s, err := NewCallsSocket()
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := net.FileConn(s.child)
	s.CloseChild()
	if err != nil {
		tb.Fatal(err)
	}
	return s, conn
}

// attachCallsSocket joins client and srv by a calls socket, as a host
// and the plugin it launched are joined.
func attachCallsSocket(tb testing.TB, client *Client, srv *server) {
	tb.Helper()
	s, conn := newCallsSocket(tb)
	srv.socket = newFrameConn(conn)
	go srv.serveCallsSocket()
	client.OfferCallsSocket(s)
	tb.Cleanup(client.CloseCallsSocket)
}

// startService serves any implementation of the service.
func startService(tb testing.TB, impl sandboxpb.SandboxServer) *harness {
	tb.Helper()
	lt, err := NewLaunchTLS()
	if err != nil {
		tb.Fatal(err)
	}
	serverTLS, err := serverTLSConfig(lt.material)
	if err != nil {
		tb.Fatal(err)
	}
	lis, sock := unixListener(tb)
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(serverTLS)))
	sandboxpb.RegisterSandboxServer(gs, impl)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(lis)
	}()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(credentials.NewTLS(lt.HostConfig())))
	if err != nil {
		tb.Fatal(err)
	}
	done, exit := context.WithCancel(context.Background())
	h := &harness{gs: gs, conn: conn, client: newClient(done, conn), exit: exit}
	tb.Cleanup(func() {
		conn.Close()
		gs.Stop()
		<-served
		exit()
	})
	return h
}

// open opens a sandbox of mode in the harness, failing the test on error.
func (h *harness) open(tb testing.TB, name, mode string, cfg map[string]any) *RemoteSandbox {
	tb.Helper()
	rs, err := h.client.Open(context.Background(), name, mode, cfg)
	if err != nil {
		tb.Fatalf("Open(%s, %s): %v", name, mode, err)
	}
	tb.Cleanup(func() { _ = rs.Close() })
	return rs
}

// checkGoroutines fails the test if goroutines started during it are
// still running after its cleanups. Register it first so it runs last.
func checkGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// waitPid reads the PID a command wrote to path.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %q", path, b)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the command never wrote its pid to %s", path)
	return 0
}

// waitGone waits for pid to leave /proc: killed and reaped.
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists %s later", pid, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fakeSandbox answers from a function; mode "fake" picks the function by
// the sandbox name, so tests can add behaviours without new modes.
type fakeSandbox struct {
	name    string
	limit   int
	spawn   func(context.Context, sandbox.Request) (sandbox.Response, error)
	closed  chan struct{} // closed by Close
	release chan struct{} // if set, Close waits for it
}

func (f *fakeSandbox) Name() string { return f.name }

func (f *fakeSandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return f.spawn(ctx, req)
}

func (f *fakeSandbox) OutputLimit() int { return f.limit }

func (f *fakeSandbox) Close() error {
	close(f.closed)
	if f.release != nil {
		<-f.release
	}
	return nil
}

var (
	fakesMu sync.Mutex
	fakes   = map[string]*fakeSandbox{}
)

// addFake registers the behaviour of the fake sandbox called name.
func addFake(t *testing.T, f *fakeSandbox) {
	if f.closed == nil {
		f.closed = make(chan struct{})
	}
	fakesMu.Lock()
	fakes[f.name] = f
	fakesMu.Unlock()
	t.Cleanup(func() {
		fakesMu.Lock()
		delete(fakes, f.name)
		fakesMu.Unlock()
	})
}

func fakeFactory(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	fakesMu.Lock()
	defer fakesMu.Unlock()
	f, ok := fakes[name]
	if !ok {
		return nil, fmt.Errorf("no fake sandbox %q", name)
	}
	if cfg["panic"] == true {
		panic("factory exploded")
	}
	return f, nil
}

// unixListener listens on a unix socket in a directory of its own,
// removed when the test ends. Not t.TempDir: its long names can exceed a
// socket path's 108 bytes.
func unixListener(tb testing.TB) (net.Listener, string) {
	tb.Helper()
	dir, err := os.MkdirTemp("", "pk-plugin-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	return lis, sock
}
