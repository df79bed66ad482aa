package main

import (
	"bufio"
	"context"
	"errors"
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

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

var sandboxdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sandboxd-test-")
	if err != nil {
		panic(err)
	}
	sandboxdBin = filepath.Join(dir, "sandboxd")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds sandboxd once per test run, with its D2 helper next to
// it as make build and the image put it.
func binary(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(sandboxdBin); err != nil {
		plugintest.GoBuild(t, filepath.Join(filepath.Dir(sandboxdBin), diagram.Helper), "./sandboxd-diagram", "")
		plugintest.GoBuild(t, sandboxdBin, "./", "-X main.version=9.9.9")
	}
	return sandboxdBin
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s failed: %s", name, textOf(res))
	}
	return textOf(res)
}

// TestStdio drives the built binary over stdio with the official client.
func TestStdio(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary(t), "--stdio", "--workspace", dir, "--log-level", "warn")
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callTool(t, cs, "Write", map[string]any{"file_path": "n.txt", "content": "over stdio\n"})
	if got := callTool(t, cs, "Read", map[string]any{"file_path": "n.txt"}); got != "     1\tover stdio" {
		t.Errorf("Read: %q", got)
	}
	if got := callTool(t, cs, "Bash", map[string]any{"command": "cat n.txt"}); !strings.Contains(got, "over stdio") {
		t.Errorf("Bash: %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("sandboxd --stdio ended %v", cmd.ProcessState)
	}
}

// started is a sandboxd process serving HTTP, with what it announced.
type started struct {
	cmd   *exec.Cmd
	url   string
	token string
	out   []string
}

func startHTTP(t testing.TB, args ...string) *started {
	t.Helper()
	return startHTTPEnv(t, nil, args...)
}

// startHTTPEnv is startHTTP with env added to the test's environment.
func startHTTPEnv(t testing.TB, env []string, args ...string) *started {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "SANDBOXD_LOG_LEVEL=warn"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM first: a sandboxd running commands as another user removes
	// the home it made for them only when it exits on its own.
	t.Cleanup(func() { stopGracefully(t, cmd) })
	s := &started{cmd: cmd}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		s.out = append(s.out, line)
		if _, url, ok := strings.Cut(line, "MCP (Streamable HTTP): "); ok {
			s.url = url
		}
		if _, tok, ok := strings.Cut(line, "(generated for this run; fix one with --token-file): "); ok {
			s.token = tok
		}
		if strings.Contains(line, "claude mcp add") {
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if s.url == "" {
		t.Fatalf("no URL announced: %q", s.out)
	}
	return s
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (s *started) connect(t testing.TB) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{s.token}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestAnnounce: a generated token is printed, works, and the printed
// client config carries it.
func TestAnnounce(t *testing.T) {
	s := startHTTP(t, "--workspace", t.TempDir())
	if len(s.token) != 64 {
		t.Fatalf("generated token %q", s.token)
	}
	all := strings.Join(s.out, "\n")
	for _, want := range []string{`"url": "` + s.url + `"`, `"Authorization": "Bearer ` + s.token + `"`, "/sse", "sandboxd 9.9.9"} {
		if !strings.Contains(all, want) {
			t.Errorf("announcement lacks %q:\n%s", want, all)
		}
	}
	cs := s.connect(t)
	if got := callTool(t, cs, "Bash", map[string]any{"command": "echo ok"}); !strings.Contains(got, "ok") {
		t.Errorf("Bash: %q", got)
	}
}

// TestGivenTokenIsNotEchoed: a token from a file works and is not printed.
func TestGivenTokenIsNotEchoed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("file-token-abcdefgh\n"), 0o600)
	s := startHTTP(t, "--workspace", t.TempDir(), "--token-file", file)
	if all := strings.Join(s.out, "\n"); strings.Contains(all, "file-token-abcdefgh") || !strings.Contains(all, "${SANDBOXD_TOKEN}") {
		t.Errorf("announcement:\n%s", all)
	}
	s.token = "file-token-abcdefgh"
	s.connect(t)
}

// TestShutdownKillsEverything: on SIGTERM, a foreground call still
// running past the grace is cancelled, background shells are killed,
// and sandboxd exits 0 with no process of theirs left.
func TestShutdownKillsEverything(t *testing.T) {
	dir := t.TempDir()
	s := startHTTP(t, "--workspace", dir, "--shutdown-grace", "1s")
	cs := s.connect(t)
	callTool(t, cs, "Bash", map[string]any{"command": "sleep 300 & echo $! > bg.pid; wait", "run_in_background": true})
	fgDone := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": "sleep 301 & echo $! > fg.pid; wait", "timeout": 600000}})
		fgDone <- err
	}()
	bg := proctest.ReadPIDsWithin(t, filepath.Join(dir, "bg.pid"), 1, 30*time.Second)[0]
	fg := proctest.ReadPIDsWithin(t, filepath.Join(dir, "fg.pid"), 1, 30*time.Second)[0]
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("sandboxd exited: %v", err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("shutdown took %v with a 1s grace", took)
	}
	for name, pid := range map[string]int{"background": bg, "foreground": fg} {
		if proctest.Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the %s shell's child %d survived shutdown", name, pid)
		}
	}
	select {
	case <-fgDone:
	case <-time.After(10 * time.Second):
		t.Error("the in-flight call never ended")
	}
}

// TestNonLoopbackNeedsToken: without a token sandboxd refuses to listen
// beyond loopback, before it binds anything.
func TestNonLoopbackNeedsToken(t *testing.T) {
	err := run(context.Background(), []string{"--addr", "0.0.0.0:7424", "--workspace", t.TempDir()},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	if !errors.Is(err, errNoTokenOffLoopback) {
		t.Fatalf("err %v, want %v", err, errNoTokenOffLoopback)
	}
}

// unassignable is a non-loopback address no host has (TEST-NET-1, RFC
// 5737): should a check be missing, listening there fails instead of
// exposing anything.
const unassignable = "192.0.2.1:7424"

// TestNonLoopbackNeedsLongToken: beyond loopback a given token must be at
// least 32 characters; sandboxd refuses a shorter one as bad input, before
// it binds anything.
func TestNonLoopbackNeedsLongToken(t *testing.T) {
	for _, token := range []string{"x", strings.Repeat("a", minRemoteToken-1)} {
		err := run(context.Background(), []string{"--addr", unassignable, "--token", token, "--workspace", t.TempDir()},
			func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		var bad *usageError
		if !errors.Is(err, errWeakTokenOffLoopback) || !errors.As(err, &bad) ||
			!strings.Contains(err.Error(), "at least 32 characters") {
			t.Errorf("token of %d: err %v, want bad input %v", len(token), err, errWeakTokenOffLoopback)
		}
	}
}

func TestCheckExposure(t *testing.T) {
	long := strings.Repeat("k", minRemoteToken)
	for _, c := range []struct {
		addr      string
		stdio     bool
		token     string
		generated bool
		want      error
	}{
		{"127.0.0.1:7424", false, "x", false, nil},
		{"[::1]:7424", false, "x", false, nil},
		{"localhost:7424", false, "x", false, nil},
		{"0.0.0.0:7424", true, "x", false, nil},
		{"0.0.0.0:7424", false, long, true, errNoTokenOffLoopback},
		{"0.0.0.0:7424", false, "x", false, errWeakTokenOffLoopback},
		{":7424", false, long[1:], false, errWeakTokenOffLoopback},
		{"[::]:7424", false, long[1:], false, errWeakTokenOffLoopback},
		{"10.0.0.5:7424", false, long[1:], false, errWeakTokenOffLoopback},
		{"0.0.0.0:7424", false, long, false, nil},
		{":7424", false, long + "more", false, nil},
	} {
		err := checkExposure(c.addr, c.stdio, c.token, c.generated)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("checkExposure(%q, stdio %v, token of %d, generated %v) = %v, want %v",
				c.addr, c.stdio, len(c.token), c.generated, err, c.want)
		}
	}
}

// Bad input exits 2 with the reason on stderr; a failure while running
// exits 1.
func TestExitCodes(t *testing.T) {
	bin := binary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"--log-level", "loud"}, 2, `--log-level "loud"`},
		{[]string{"--workspace", "/does/not/exist"}, 2, "/does/not/exist"},
		{[]string{"--addr", "0.0.0.0:0", "--workspace", t.TempDir()}, 2, "without a token"},
		{[]string{"--addr", unassignable, "--token", "x", "--workspace", t.TempDir()}, 2, "at least 32 characters"},
		{[]string{"--addr", busy.Addr().String(), "--workspace", t.TempDir()}, 1, "listen on " + busy.Addr().String()},
	} {
		cmd := exec.Command(bin, c.args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: %v, stderr %q; want exit %d saying %q", c.args, err, stderr.String(), c.code, c.want)
		}
	}
}
