// Package mcpready waits for a codegen sandbox to answer: a provider's
// Provision returns only once an MCP initialize through the endpoint it
// hands out has been answered with a result, so the agent's first call
// never races sandboxd's start.
package mcpready

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Path is where sandboxd serves MCP over Streamable HTTP
// (cmd/sandboxd/internal/server.PathMCP).
const Path = "/mcp"

// Interval is how long apart the probes go.
const Interval = 20 * time.Millisecond

// initializeBody is the MCP initialize a probe sends.
var initializeBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"promptkit-sandbox-provider","version":"probe"}}}`)

// Sandbox is what is being waited for, to tell when to stop waiting.
type Sandbox interface {
	// Exited is closed (or Failed says why) once the sandbox cannot come
	// up any more: its container or pod stopped.
	Exited() <-chan struct{}
	// LastOutput is the end of what sandboxd wrote, for the error.
	LastOutput() string
}

// Wait returns once an MCP initialize through endpoint is answered with a
// result. It fails at once when sb exits, quoting what sandboxd said
// (KindStart), and when ctx ends (KindTimeout). mode names the provider
// mode in errors.
func Wait(ctx context.Context, mode, endpoint, token string, sb Sandbox) error {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var last error
	for {
		select {
		case <-sb.Exited():
			return sandbox.Errorf(sandbox.KindStart, "%s: sandboxd exited before it answered MCP initialize; its output ended: %s", mode, orNothing(sb.LastOutput()))
		default:
		}
		ok, err := Initialize(ctx, hc, endpoint, token)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return sandbox.Errorf(sandbox.KindTimeout, "%s: sandboxd did not answer MCP initialize in time (last: %v); its output ended: %s", mode, last, orNothing(sb.LastOutput()))
		case <-sb.Exited():
		case <-time.After(Interval):
		}
	}
}

// Initialize sends one MCP initialize and reports whether a result came
// back; the session it opened is ended. A connection that fails (the
// socket is not there yet) is no answer; an answer that is not a result
// is the error.
func Initialize(ctx context.Context, hc *http.Client, endpoint, token string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(initializeBody))
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return false, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("initialize: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if !hasResult(body) {
		return false, fmt.Errorf("initialize: no result in %q", body)
	}
	if session := resp.Header.Get("Mcp-Session-Id"); session != "" {
		end, err := http.NewRequestWithContext(ctx, http.MethodDelete, endpoint, nil)
		if err == nil {
			end.Header.Set("Authorization", "Bearer "+token)
			end.Header.Set("Mcp-Session-Id", session)
			if resp, err := hc.Do(end); err == nil {
				_ = resp.Body.Close()
			}
		}
	}
	return true, nil
}

// hasResult reports whether body, JSON or an SSE event, carries a
// JSON-RPC result.
func hasResult(body []byte) bool {
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "data:"))
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && len(msg.Result) > 0 {
			return true
		}
	}
	return false
}

func orNothing(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}
