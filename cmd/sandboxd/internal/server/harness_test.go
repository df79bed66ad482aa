package server

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "test-token-0123456789abcdef"

// daemon is a sandboxd serving over real HTTP on a loopback port.
type daemon struct {
	srv  *Server
	http *HTTP
	base string // http://127.0.0.1:PORT
	dir  string // the (first) workspace
}

// startDaemon serves cfg on 127.0.0.1; a zero Workspaces gets a fresh
// temporary one, a zero Token the test token. It shuts down with the test.
func startDaemon(t testing.TB, cfg Config) *daemon {
	t.Helper()
	if len(cfg.Workspaces) == 0 {
		cfg.Workspaces = []Workspace{{Dir: t.TempDir()}}
	}
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cfg.Workspaces[0].Dir, "LANG=C"}
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	h := srv.NewHTTP(true)
	done := make(chan error, 1)
	go func() { done <- h.Serve(ln) }()
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &daemon{srv: srv, http: h, base: "http://" + ln.Addr().String(), dir: cfg.Workspaces[0].Dir}
}

// bearerTransport adds the token to every request, as a configured MCP
// client does.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func authClient(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport}}
}

// transport names the MCP transports the tests run over.
type transport string

const (
	streamable transport = "streamable"
	sse        transport = "sse"
)

// connect opens an MCP session to d with the official Go SDK client.
func (d *daemon) connect(t testing.TB, tr transport) *mcp.ClientSession {
	t.Helper()
	// The SSE transport's stream lives on the context Connect is given,
	// so it must outlive this function.
	ctx := context.Background()
	var ct mcp.Transport
	switch tr {
	case sse:
		ct = &mcp.SSEClientTransport{Endpoint: d.base + PathSSE, HTTPClient: authClient(testToken)}
	default:
		ct = &mcp.StreamableClientTransport{Endpoint: d.base + PathMCP, HTTPClient: authClient(testToken), MaxRetries: -1}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxd-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", tr, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// result is a tool call's text and whether the tool reported an error.
type result struct {
	Text    string
	IsError bool
}

func call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) result {
	t.Helper()
	r, err := tryCall(cs, tool, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return r
}

// tryCall is call for goroutines other than the test's: a failed call is
// an error, not a t.Fatal.
func tryCall(cs *mcp.ClientSession, tool string, args map[string]any) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return result{Text: b.String(), IsError: res.IsError}, nil
}

// ok calls a tool that must succeed and returns its text.
func ok(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	r := call(t, cs, tool, args)
	if r.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, r.Text)
	}
	return r.Text
}

// fails calls a tool that must fail and returns its error text.
func fails(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	r := call(t, cs, tool, args)
	if !r.IsError {
		t.Fatalf("%s(%v) succeeded, want an error: %s", tool, args, r.Text)
	}
	return r.Text
}
