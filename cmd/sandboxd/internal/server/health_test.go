package server

import (
	"io"
	"net/http"
	"testing"
)

// /healthz answers without a token, while everything behind the gate
// still needs one.
func TestHealthzNeedsNoToken(t *testing.T) {
	d := startDaemon(t, Config{})
	get := func(path string, client *http.Client) (int, string) {
		t.Helper()
		resp, err := client.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(PathHealth, http.DefaultClient); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET %s without a token: %d %q, want 200 \"ok\\n\"", PathHealth, code, body)
	}
	if code, _ := get(PathMCP, http.DefaultClient); code != http.StatusUnauthorized {
		t.Errorf("GET %s without a token: %d, want 401", PathMCP, code)
	}
	if code, _ := get(PathSSE, http.DefaultClient); code != http.StatusUnauthorized {
		t.Errorf("GET %s without a token: %d, want 401", PathSSE, code)
	}
	resp, err := http.Post(d.base+PathHealth, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", PathHealth, resp.StatusCode)
	}
	// A path the gate's mux does not serve still needs the token first.
	if code, _ := get(PathHealth+"/x", http.DefaultClient); code != http.StatusUnauthorized {
		t.Errorf("GET %s/x without a token: %d, want 401", PathHealth, code)
	}
}
