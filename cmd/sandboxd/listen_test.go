package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// unixStarted is a sandboxd serving on a unix socket.
type unixStarted struct {
	cmd   *exec.Cmd
	sock  string
	stdin io.WriteCloser
}

// startUnix starts sandboxd on a socket in a fresh directory, with a
// token from a file, and waits for its announcement.
func startUnix(t *testing.T, workspace, token string, extra ...string) *unixStarted {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "mcp.sock")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--addr", "unix:" + sock, "--token-file", tokenFile, "--workspace", workspace, "--log-level", "warn"}, extra...)
	cmd := exec.Command(binary(t), args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGracefully(t, cmd) })
	sc := bufio.NewScanner(stdout)
	announced := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "on unix socket "+sock) {
			announced = true
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if !announced {
		t.Fatal("sandboxd announced no unix socket")
	}
	return &unixStarted{cmd: cmd, sock: sock, stdin: stdin}
}

// unixClient is an HTTP client whose every connection goes to sock.
func unixClient(sock, token string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearerOver{token, tr}
	}
	return &http.Client{Transport: rt}
}

type bearerOver struct {
	token string
	next  http.RoundTripper
}

func (b bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestUnixSocket: --addr unix:PATH serves MCP to the official client over
// the socket, with the token from --token-file; the socket is 0600, a
// request without the token is refused, and the file is gone after
// shutdown.
func TestUnixSocket(t *testing.T) {
	ws := t.TempDir()
	const token = "unix-socket-token-0123456789abcdef0123"
	s := startUnix(t, ws, token)

	info, err := os.Lstat(s.sock)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != os.ModeSocket || info.Mode().Perm() != socketMode {
		t.Errorf("socket %s: mode %v, want a socket with %#o", s.sock, info.Mode(), socketMode)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "unix-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://localhost/mcp", HTTPClient: unixClient(s.sock, token), MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callTool(t, cs, "Write", map[string]any{"file_path": "u.txt", "content": "over a socket\n"})
	if got := callTool(t, cs, "Read", map[string]any{"file_path": "u.txt"}); got != "     1\tover a socket" {
		t.Errorf("Read: %q", got)
	}
	cs.Close()

	for name, c := range map[string]*http.Client{"no token": unixClient(s.sock, ""), "wrong token": unixClient(s.sock, "nope")} {
		resp, err := c.Post("http://localhost/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, resp.StatusCode)
		}
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("sandboxd exited: %v", err)
	}
	if _, err := os.Lstat(s.sock); !os.IsNotExist(err) {
		t.Errorf("socket still there after shutdown: %v", err)
	}
}

// TestUnixSocketReplacesStale: a socket file nothing listens on (a
// sandboxd that was SIGKILLed) is replaced; a live one is not taken over.
func TestUnixSocketReplacesStale(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listen("unix:" + sock); err == nil || !strings.Contains(err.Error(), "another process is listening") {
		t.Errorf("listen over a live socket: %v", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln2, err := listen("unix:" + sock)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	ln2.Close()
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := listen("unix:" + sock); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen over a regular file: %v", err)
	}
}

// TestExitOnStdinEOF: with --exit-on-stdin-eof, closing stdin shuts
// sandboxd down cleanly, as a provider's death does to its container.
func TestExitOnStdinEOF(t *testing.T) {
	s := startUnix(t, t.TempDir(), "lifeline-token-0123456789abcdef0123456", "--exit-on-stdin-eof")
	start := time.Now()
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sandboxd exited: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("sandboxd still running 15s after its stdin ended")
	}
	t.Logf("sandboxd exited %v after its stdin ended", time.Since(start).Round(time.Millisecond))
	if _, err := os.Lstat(s.sock); !os.IsNotExist(err) {
		t.Errorf("socket still there after shutdown: %v", err)
	}
}
