package main

import (
	"context"
	"errors"
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
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/egresstunnel"
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

// freeLoopbackAddr is a loopback address no one listened on a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestEgressThroughTheTunnel: the provider dials into sandboxd's tunnel
// with its token and serves its proxy on the session; a request the
// agent's command makes through $HTTP_PROXY reaches it.
func TestEgressThroughTheTunnel(t *testing.T) {
	token := strings.Repeat("7", minRemoteToken)
	tunnel := freeLoopbackAddr(t)
	s := startHTTP(t, "--workspace", t.TempDir(), "--run-as", "root", "--log-level", "error", "--token", token,
		"--egress-tunnel", tunnel, "--egress-listen", "127.0.0.1:0")
	s.token = token
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := egresstunnel.Dial(ctx, tunnel, "not-"+token); err == nil || err.Error() != "egress tunnel refused: bad token" {
		t.Fatalf("a wrong token: %v", err)
	}
	session, err := egresstunnel.Dial(ctx, tunnel, token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := egresstunnel.Dial(ctx, tunnel, token); err == nil || err.Error() != "egress tunnel refused: another tunnel is up" {
		t.Fatalf("a second session: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "proxy saw %s %s", r.Method, r.URL)
	})}
	go func() { _ = srv.Serve(session) }()
	defer srv.Close()
	cs := s.connect(t)
	got := callTool(t, cs, "Bash", map[string]any{"command": `p=${HTTP_PROXY#http://}; exec 3<>/dev/tcp/${p%:*}/${p##*:} &&
printf 'GET http://deps.example/mod HTTP/1.0\r\nHost: deps.example\r\n\r\n' >&3 && cat <&3`})
	if !strings.Contains(got, "200 OK") || !strings.Contains(got, "proxy saw GET http://deps.example/mod") {
		t.Fatalf("a request from the sandbox: %s", got)
	}
}

// TestEgressTunnelBadInput: the tunnel excludes the socket, and beyond
// loopback wants a token as --addr does; each is refused as bad input
// before anything listens.
func TestEgressTunnelBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"--egress-socket", "/run/egress.sock", "--egress-tunnel", "127.0.0.1:7426"}, errEgressBoth},
		{[]string{"--egress-tunnel", unassignable}, errNoTokenOffLoopback},
		{[]string{"--egress-tunnel", unassignable, "--token", "short"}, errWeakTokenOffLoopback},
	} {
		err := run(context.Background(), append(c.args, "--stdio", "--workspace", t.TempDir()),
			func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		var bad *usageError
		if !errors.Is(err, c.want) || !errors.As(err, &bad) {
			t.Errorf("%v: err %v, want bad input %v", c.args, err, c.want)
		}
	}
	if got := errEgressBoth.Error(); !strings.Contains(got, "--egress-socket") || !strings.Contains(got, "--egress-tunnel") {
		t.Errorf("the conflict's error names one flag: %q", got)
	}
}
