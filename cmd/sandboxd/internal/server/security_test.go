package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawSession initializes a Streamable HTTP session by hand and returns its
// ID, so requests can be sent with chosen headers.
func rawSession(t *testing.T, d *daemon) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	resp := post(t, d.base+PathMCP, body, map[string]string{"Authorization": "Bearer " + testToken})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %s", resp.Status)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	return id
}

func post(t *testing.T, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func writeCall(path, content string) string {
	args, _ := json.Marshal(map[string]any{"file_path": path, "content": content})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Write","arguments":%s}}`, args)
}

// TestGateRefusesBeforeAnyTool sends a Write that would create a file
// with each thing the gate must refuse, and checks the status and that
// the file was never made; a proper request then makes it.
func TestGateRefusesBeforeAnyTool(t *testing.T) {
	d := startDaemon(t, Config{AllowedOrigins: []string{"http://localhost:5173"}, MaxBody: 4096})
	session := rawSession(t, d)
	good := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Session-Id": session}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for k, v := range good {
			h[k] = v
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	target := filepath.Join(d.dir, "made.txt")
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
	}{
		{"no token", with("Authorization", ""), writeCall(target, "x"), 401},
		{"wrong token", with("Authorization", "Bearer "+testToken+"x"), writeCall(target, "x"), 401},
		{"token prefix", with("Authorization", "Bearer "+testToken[:10]), writeCall(target, "x"), 401},
		{"basic scheme", with("Authorization", "Basic "+testToken), writeCall(target, "x"), 401},
		{"foreign origin", with("Origin", "https://evil.example"), writeCall(target, "x"), 403},
		{"null origin", with("Origin", "null"), writeCall(target, "x"), 403},
		{"origin on another port", with("Origin", "http://localhost:5174"), writeCall(target, "x"), 403},
		{"rebinding host", with("Host", "evil.example:7424"), writeCall(target, "x"), 403},
		{"body over the cap", good, writeCall(target, strings.Repeat("x", 5000)), 413},
	}
	for _, c := range cases {
		// The base URL serves Streamable HTTP too, behind the same gate.
		for _, path := range []string{PathMCP, "/"} {
			t.Run(c.name+" at "+path, func(t *testing.T) {
				resp := post(t, d.base+path, c.body, c.headers)
				if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
				}
				if _, err := os.Stat(target); !os.IsNotExist(err) {
					t.Fatalf("the refused request reached the tool: %v", err)
				}
			})
		}
	}
	t.Run("allowed origin and loopback host pass", func(t *testing.T) {
		h := with("Origin", "http://localhost:5173")
		h["Host"] = strings.Replace(strings.TrimPrefix(d.base, "http://"), "127.0.0.1", "localhost", 1)
		if resp := post(t, d.base+PathMCP, writeCall(target, "made"), h); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %s", resp.Status)
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "made" {
			t.Fatalf("file: %q, %v", b, err)
		}
	})
}

// TestGateCapsChunkedBodies: a body without a Content-Length is counted
// as it is read.
func TestGateCapsChunkedBodies(t *testing.T) {
	d := startDaemon(t, Config{MaxBody: 1024})
	session := rawSession(t, d)
	body := io.MultiReader(strings.NewReader(writeCall(filepath.Join(d.dir, "c"), strings.Repeat("y", 2048))))
	req, _ := http.NewRequest(http.MethodPost, d.base+PathMCP, body)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %s, want 413", resp.Status)
	}
}

// TestGateCoversSSE: the legacy endpoints sit behind the same gate.
func TestGateCoversSSE(t *testing.T) {
	d := startDaemon(t, Config{})
	for _, path := range []string{PathSSE, PathMessage + "?sessionId=x"} {
		req, _ := http.NewRequest(http.MethodGet, d.base+path, nil)
		if path != PathSSE {
			req, _ = http.NewRequest(http.MethodPost, d.base+path, bytes.NewReader([]byte(`{}`)))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a token: %s, want 401", path, resp.Status)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", path, got)
		}
	}
}
