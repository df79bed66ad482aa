package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
)

// syncBuffer is a log sink the server's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

// records are the JSON log lines written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// idRecorder remembers the X-Request-Id of every answer.
type idRecorder struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (r *idRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.ids[resp.Header.Get(telemetry.HeaderRequestID)] = true
		r.mu.Unlock()
	}
	return resp, err
}

// Every HTTP request gets a request id, answered in X-Request-Id; the
// JSON log line of each tool call carries the id of the request that
// brought it, and so does the request's own line.
func TestJSONLogsCarryRequestIDs(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := startDaemon(t, Config{Logger: log})
	for _, tr := range []transport{streamable, sse} {
		rec := &idRecorder{ids: map[string]bool{}}
		var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: d.base + PathMCP, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}
		if tr == sse {
			ct = &mcp.SSEClientTransport{Endpoint: d.base + PathSSE, HTTPClient: &http.Client{Transport: rec}}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "ids", Version: "0"}, nil)
		cs, err := client.Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		ok(t, cs, "Glob", map[string]any{"pattern": "*." + string(tr)})
		fails(t, cs, "Bash", map[string]any{"command": "sudo " + string(tr)})
		cs.Close()

		httpIDs := map[string]bool{}
		var mine []map[string]any
		for _, r := range logs.records(t) {
			switch r["msg"] {
			case "http request":
				httpIDs[r["request_id"].(string)] = true
			case "tool call":
				mine = append(mine, r)
			}
		}
		logs.reset()
		seen := map[string]bool{}
		n := 0
		for _, c := range mine {
			id, _ := c["request_id"].(string)
			if len(id) != 16 {
				t.Errorf("%s: tool call logged with request id %q, want 16 hex digits: %v", tr, id, c)
				continue
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			n++
			if !httpIDs[id] {
				t.Errorf("%s: tool call's request id %s has no http request line", tr, id)
			}
			if !rec.ids[id] {
				t.Errorf("%s: tool call's request id %s was not answered in %s", tr, id, telemetry.HeaderRequestID)
			}
		}
		if n != 2 {
			t.Errorf("%s: %d tool calls with distinct request ids logged, want 2: %v", tr, n, mine)
		}
		// The refused Bash says why, under its id.
		var refused bool
		for _, c := range mine {
			refused = refused || c["tool"] == "Bash" && c["refused"] == "denylist" && c["error"] == true
		}
		if !refused {
			t.Errorf("%s: no log line of the refused Bash: %v", tr, mine)
		}
	}
}

// Over stdio there is no HTTP request: each tool call gets a fresh id.
func TestStdioCallsGetRequestIDs(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	srv, err := New(Config{Workspaces: []Workspace{{Dir: t.TempDir()}}, Token: testToken, Logger: log,
		Env: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, serverIn, serverOut) }()
	defer func() {
		cancel()
		clientOut.Close()
		<-done
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-ids", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ok(t, cs, "Glob", map[string]any{"pattern": "*"})
	ok(t, cs, "Glob", map[string]any{"pattern": "*"})
	ids := map[string]bool{}
	for _, r := range logs.records(t) {
		if r["msg"] == "tool call" {
			id, _ := r["request_id"].(string)
			if len(id) != 16 {
				t.Errorf("tool call over stdio logged with request id %q", id)
			}
			ids[id] = true
		}
	}
	if len(ids) != 2 {
		t.Errorf("two calls over stdio logged %d distinct request ids, want 2", len(ids))
	}
}
