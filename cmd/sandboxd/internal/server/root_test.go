package server

import (
	"context"
	"net/http"
	"testing"
)

// TestBaseURLServesBothTransports: one base URL serves PromptKit's two
// clients: Streamable HTTP posted to the URL as it is (here mcp-go's
// client, given the URL without a path), HTTP+SSE at URL/sse. Only the
// exact root is added: any other path is still 404, token or not.
func TestBaseURLServesBothTransports(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	for _, c := range []struct {
		url string
		tr  transport
	}{
		{d.base, streamable},
		{d.base + "/", streamable},
		{d.base + PathSSE, sse},
	} {
		cl := connectMCPGo(t, c.url, c.tr)
		r, err := callMCPGo(context.Background(), cl, "Bash", map[string]any{"command": "echo via " + c.url})
		if err != nil || r.IsError || r.Text != "via "+c.url+"\n" {
			t.Errorf("Bash over %s at %s: %+v, %v", c.tr, c.url, r, err)
		}
	}
	for _, path := range []string{"/nope", "/mcp/", "/index.html"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req, _ := http.NewRequest(method, d.base+path, nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: %s, want 404", method, path, resp.Status)
			}
		}
	}
}
