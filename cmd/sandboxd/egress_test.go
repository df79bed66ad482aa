package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// fakeProxy answers every request on a unix socket, as the provider's
// egress proxy would, naming what it was asked for.
func fakeProxy(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(shortTemp(t), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "proxy saw %s %s %q", r.Method, r.URL, body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

// shortTemp is a temporary directory with a path short enough for a unix
// socket (108 bytes), which t.TempDir's may not be.
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestEgressRelayCarriesToTheSocket(t *testing.T) {
	sock := fakeProxy(t)
	r, err := startEgressRelay("127.0.0.1:0", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	proxy, _ := url.Parse("http://" + r.Addr())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := client.Post("http://deps.example/mod", "text/plain", strings.NewReader("req"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if want := `proxy saw POST http://deps.example/mod "req"`; string(got) != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
}

func TestEgressRelayRefusesOffLoopback(t *testing.T) {
	_, err := startEgressRelay("0.0.0.0:0", "/nonexistent")
	if err == nil || err.Error() != "--egress-listen 0.0.0.0:0: want a loopback address such as 127.0.0.1:3128" {
		t.Fatalf("err = %v", err)
	}
}

func TestEgressRelayWithoutProxyClosesTheConnection(t *testing.T) {
	r, err := startEgressRelay("127.0.0.1:0", filepath.Join(shortTemp(t), "none.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read = %d, %v; want the relay to close a connection it cannot carry", n, err)
	}
}

// TestEgressThroughSandboxd: the agent's commands find the relay in their
// environment, and a request made with the language's own HTTP client
// reaches the provider's proxy.
func TestEgressThroughSandboxd(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		ci.Skipf(t, "python3 is not installed (make test installs it): %v", err)
	}
	sock := fakeProxy(t)
	ca := filepath.Join(t.TempDir(), "bundle.pem")
	s := startHTTP(t, "--workspace", t.TempDir(), "--run-as", "root", "--log-level", "error",
		"--egress-socket", sock, "--egress-listen", "127.0.0.1:0", "--egress-ca", ca)
	cs := s.connect(t)
	env := callTool(t, cs, "Bash", map[string]any{"command": `echo "$SSL_CERT_FILE"; case "$HTTPS_PROXY" in http://127.0.0.1:*) echo relay;; esac`})
	if !strings.Contains(env, ca) || !strings.Contains(env, "relay") {
		t.Fatalf("the command's environment: %s", env)
	}
	got := callTool(t, cs, "Bash", map[string]any{"command": python + ` -c "import urllib.request as u; print(u.urlopen('http://pkgs.example/simple/').read().decode())"`})
	if !strings.Contains(got, "proxy saw GET http://pkgs.example/simple/") {
		t.Fatalf("a request from the sandbox: %s", got)
	}
}
