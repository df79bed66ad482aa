package mcpready

import (
	"strings"
	"testing"
)

// TestRefusalAnswersTheCall: a JSON-RPC request gets its own id back in
// a JSON-RPC error carrying the message; anything else (an SSE GET, a
// notification) the message as text; both 409 and closing.
func TestRefusalAnswersTheCall(t *testing.T) {
	answer := Refusal("sandbox cg-1 is paused")
	for _, tc := range []struct{ req, want string }{
		{"POST /mcp HTTP/1.1\r\nContent-Length: 46\r\n\r\n" + `{"jsonrpc":"2.0","id":"7","method":"tools/call"}`,
			`{"error":{"code":-32001,"message":"sandbox cg-1 is paused"},"id":"7","jsonrpc":"2.0"}`},
		{"POST /mcp HTTP/1.1\r\n\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "sandbox cg-1 is paused\n"},
		{"GET /sse HTTP/1.1\r\n\r\n", "sandbox cg-1 is paused\n"},
	} {
		got := string(answer([]byte(tc.req)))
		if !strings.HasPrefix(got, "HTTP/1.1 409 Conflict\r\n") || !strings.Contains(got, "Connection: close\r\n") || !strings.HasSuffix(got, "\r\n\r\n"+tc.want) {
			t.Errorf("answer to %q:\n%q\nwant the body %q", tc.req, got, tc.want)
		}
	}
}
