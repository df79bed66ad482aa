// Package mcptest connects an independent MCP client, the official Go
// SDK, to a codegen sandbox's endpoint, as an agent would, for the
// providers' end-to-end tests.
package mcptest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bearer is an http.RoundTripper that sends a bearer token.
type Bearer struct{ Token string }

// RoundTrip adds the Authorization header to a copy of r.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Connect opens a session at endpoint with token; it is closed when the
// test ends.
func Connect(t testing.TB, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "codegen-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: Bearer{token}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// Call calls a tool and returns its text and whether it is an error
// result; a protocol failure fails the test.
func Call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// CallText calls a tool that must succeed and returns its text.
func CallText(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	out, isErr := Call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s failed: %s", name, out)
	}
	return out
}
