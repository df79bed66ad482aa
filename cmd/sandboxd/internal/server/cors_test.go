package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// CORS (issue 16, item 10): a page from an --allowed-origin could not use
// sandboxd, as its browser's preflight got 401 and no answer carried
// Access-Control-Allow-Origin.

func TestCORSPreflightAndHeaders(t *testing.T) {
	const allowed, other = "http://127.0.0.1:7000", "http://127.0.0.1:7001"
	d := startDaemon(t, Config{AllowedOrigins: []string{allowed}, MaxBody: 1 << 10})
	do := func(method, origin, token, body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, d.base+PathMCP, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	preflight := map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version",
	}

	resp := do(http.MethodOptions, allowed, "", "", preflight)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("preflight from an allowed origin: %d, want 204", resp.StatusCode)
	}
	h := resp.Header
	if h.Get("Access-Control-Allow-Origin") != allowed || !strings.Contains(h.Get("Vary"), "Origin") || h.Get("Access-Control-Max-Age") == "" {
		t.Errorf("preflight headers: %v", h)
	}
	for _, m := range []string{"GET", "POST", "DELETE", "OPTIONS"} {
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) {
			t.Errorf("Allow-Methods %q lacks %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, name := range []string{"Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID", "Accept"} {
		if !strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), strings.ToLower(name)) {
			t.Errorf("Allow-Headers %q lacks %s", h.Get("Access-Control-Allow-Headers"), name)
		}
	}
	if !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("Expose-Headers %q lacks Mcp-Session-Id", h.Get("Access-Control-Expose-Headers"))
	}

	resp = do(http.MethodOptions, other, "", "", preflight)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("preflight from another origin: %d %v; want 403 without CORS headers", resp.StatusCode, resp.Header)
	}
	// An OPTIONS that is no preflight is an ordinary request: token first.
	if resp = do(http.MethodOptions, allowed, "", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("OPTIONS without Access-Control-Request-Method: %d, want 401", resp.StatusCode)
	}

	// The gate's refusals to an allowed origin carry the headers too, so
	// the page can read why.
	for _, tc := range []struct {
		name, token, body string
		want              int
	}{
		{"no token", "", "{}", http.StatusUnauthorized},
		{"too large", testToken, strings.Repeat("x", 2<<10), http.StatusRequestEntityTooLarge},
	} {
		resp := do(http.MethodPost, allowed, tc.token, tc.body, map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode != tc.want || resp.Header.Get("Access-Control-Allow-Origin") != allowed ||
			!strings.Contains(resp.Header.Get("Vary"), "Origin") || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
			t.Errorf("%s: %d %v; want %d with CORS headers", tc.name, resp.StatusCode, resp.Header, tc.want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, d.base+PathMCP, strings.NewReader("{}"))
	req.Host = "evil.example:80"
	req.Header.Set("Origin", allowed)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Errorf("bad Host from an allowed origin: %v %v", resp, err)
	}
	// A request without Origin (not a browser's) gets no CORS headers.
	if resp = do(http.MethodPost, "", "", "{}", nil); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no Origin: %v", resp.Header)
	}
}

// TestCORSInChromium drives a real browser: a page served from an allowed
// origin initializes an MCP session over Streamable HTTP with the token
// and lists the tools, and the same page from another origin is refused
// by the browser.
func TestCORSInChromium(t *testing.T) {
	browser := findChromium(t)
	pageAllowed, pageOther := pageListener(t), pageListener(t)
	allowedOrigin := "http://" + pageAllowed.Addr().String()
	d := startDaemon(t, Config{AllowedOrigins: []string{allowedOrigin}})
	page := mcpPage(d.base+PathMCP, testToken)
	for _, ln := range []net.Listener{pageAllowed, pageOther} {
		servePage(t, ln, page)
	}

	got := dumpDOM(t, browser, allowedOrigin+"/")
	if !strings.Contains(got, "RESULT:OK") || !strings.Contains(got, "Grep") || !strings.Contains(got, "Read") {
		t.Errorf("page from the allowed origin: %s", domResult(got))
	}
	t.Logf("allowed origin: %s", domResult(got))
	got = dumpDOM(t, browser, "http://"+pageOther.Addr().String()+"/")
	t.Logf("other origin: %s", domResult(got))
	if !strings.Contains(got, "RESULT:ERR") || strings.Contains(got, "Grep") {
		t.Errorf("page from another origin: %s; want a CORS error", domResult(got))
	}
}

// findChromium is the browser's path. Without one the test skips, unless
// CI is set: there it must run.
func findChromium(t *testing.T) string {
	if testing.Short() {
		t.Skip("skipping in -short mode: starts a browser (make test runs it)")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	ci.Skip(t, "chromium is not installed, which the browser CORS test needs (apt-get install -y chromium; make test does)")
	return ""
}

func pageListener(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func servePage(t *testing.T, ln net.Listener, page string) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// mcpPage is a page whose script, while the page loads, initializes an
// MCP session at endpoint and lists its tools, with synchronous requests
// so the answer is in the DOM before --dump-dom prints it.
func mcpPage(endpoint, token string) string {
	return `<!doctype html><html><body><pre id="out">RESULT:PENDING</pre><script>
var out = document.getElementById("out");
function post(body, session) {
  var x = new XMLHttpRequest();
  x.open("POST", ` + jsString(endpoint) + `, false);
  x.setRequestHeader("Authorization", "Bearer " + ` + jsString(token) + `);
  x.setRequestHeader("Content-Type", "application/json");
  x.setRequestHeader("Accept", "application/json, text/event-stream");
  if (session) { x.setRequestHeader("Mcp-Session-Id", session); x.setRequestHeader("Mcp-Protocol-Version", "2025-06-18"); }
  x.send(JSON.stringify(body));
  if (x.status >= 300) { throw new Error("HTTP " + x.status + ": " + x.responseText); }
  return x;
}
try {
  var init = post({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-06-18", capabilities: {}, clientInfo: {name: "browser", version: "0"}}});
  var session = init.getResponseHeader("Mcp-Session-Id");
  if (!session) { throw new Error("no Mcp-Session-Id exposed: " + init.responseText); }
  post({jsonrpc: "2.0", method: "notifications/initialized"}, session);
  var list = post({jsonrpc: "2.0", id: 2, method: "tools/list"}, session);
  var m = list.responseText.match(/\{.*\}/s);
  var tools = JSON.parse(m[0]).result.tools.map(function (t) { return t.name; });
  out.textContent = "RESULT:OK " + tools.join(",");
} catch (e) {
  out.textContent = "RESULT:ERR " + e;
}
</script></body></html>`
}

// jsString quotes s for a script; no "</script>" can end it early.
func jsString(s string) string { return strings.ReplaceAll(fmt.Sprintf("%q", s), "<", `\u003c`) }

// dumpDOM loads url in headless Chromium and returns the DOM it prints.
// The browser gets a minute, a profile of its own in a temporary
// directory, and no way to reach anything but loopback of its own accord;
// it and every process it started are killed when it is done.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, browser,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--metrics-recording-only",
		"--dump-dom", url)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	return string(out)
}

func domResult(dom string) string {
	if i := strings.Index(dom, "RESULT:"); i >= 0 {
		return dom[i:min(len(dom), i+400)]
	}
	return dom[:min(len(dom), 400)]
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
