package dockerbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/egress/egresstest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// egressSecret is what the proxy adds to requests to api.test.
const egressSecret = "egress-test-s3cret-value"

// upstreams routes the proxies' dials for the test's hostnames to
// servers of its own on loopback, and trusts their CA, for the test's
// length.
func upstreams(t *testing.T, routes map[string]*httptest.Server) {
	t.Helper()
	oldDial, oldRoots := egressDial, egressRoots
	egressDial, egressRoots = egresstest.Upstreams(routes)
	t.Cleanup(func() { egressDial, egressRoots = oldDial, oldRoots })
}

// TestCodegenEgress: a sandbox with egress rules reaches an allowed host
// through its proxy and nothing else; a request to a host whose rule
// names a secret carries it, though the secret is nowhere in the
// sandbox, and an answer that quotes it comes back scrubbed.
func TestCodegenEgress(t *testing.T) {
	image := realImage(t) // bash, whose /dev/tcp is the agent's raw client here
	t.Logf("image %s", image)
	deps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "module %s from deps", r.URL.Path)
	}))
	defer deps.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "api saw Authorization=%q", r.Header.Get("Authorization"))
	}))
	defer api.Close()
	upstreams(t, map[string]*httptest.Server{"deps.test:80": deps, "api.test:80": api})
	t.Setenv("EGRESS_TEST_TOKEN", egressSecret)
	p, _ := newTestProvider(t)
	ctx := context.Background()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{
		"image": image,
		"egress": []any{
			map[string]any{"host": "deps.test"},
			map[string]any{"host": "api.test:80", "secret": "EGRESS_TEST_TOKEN", "header": "Authorization", "format": "Bearer %s"},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "deps.test, api.test:80 (+Authorization)"; got.Details["egress"] != want {
		t.Errorf("details egress = %q, want %q", got.Details["egress"], want)
	}
	t.Logf("provisioned %s", got.ID)
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	bash := func(cmd string) string {
		return mcptest.CallText(t, cs, "Bash", map[string]any{"command": cmd})
	}
	get := func(url, host string) string { return egresstest.Get(t, cs, url, host) }
	if out := get("http://deps.test/golang.org/x/mod", "deps.test"); !strings.Contains(out, "200 OK") || !strings.Contains(out, "module /golang.org/x/mod from deps") {
		t.Errorf("an allowed host: %s", out)
	}
	denied := get("http://example.com/", "example.com")
	if !strings.Contains(denied, "403 Forbidden") || !strings.Contains(denied, "promptkit-sandbox egress: example.com:80 is not allowed by this sandbox's egress policy") {
		t.Errorf("a host no rule allows: %s", denied)
	}
	// The upstream quotes the header it got: the rule's, with the
	// secret, which the proxy scrubs from the answer on its way back.
	if out := get("http://api.test/user", "api.test"); !strings.Contains(out, `api saw Authorization="Bearer `) || strings.Contains(out, egressSecret) {
		t.Errorf("a host whose rule adds the secret: %s", out)
	}
	// Nowhere inside: not in the agent's env, not in sandboxd's.
	id := got.Details["container"]
	for _, where := range []string{bash(`env`), docker(t, "exec", id, "/bin/cat", "/proc/1/environ"), docker(t, "inspect", id)} {
		if strings.Contains(where, egressSecret) || strings.Contains(where, "EGRESS_TEST_TOKEN") {
			t.Fatalf("the secret is inside the sandbox: %s", where)
		}
	}
	if out := bash(`echo "$HTTP_PROXY $SSL_CERT_FILE"; grep -c 'BEGIN CERTIFICATE' "$SSL_CERT_FILE"`); !strings.Contains(out, "http://127.0.0.1:3128 /run/sandboxd/egress-ca.pem") {
		t.Errorf("the agent's proxy settings: %s", out)
	}
	// Nor in the memory of any process of the sandbox, sandboxd's
	// included, as a core dump would hold it: read from the host, as
	// root may (sandboxd is not dumpable to its own user).
	if os.Geteuid() == 0 {
		if where := egresstest.MemoryHolding(t, egresstest.ProcessTree(docker(t, "inspect", "--format", "{{.State.Pid}}", id)), []byte(egressSecret)); where != "" {
			t.Errorf("the secret is in the memory of %s", where)
		}
	} else {
		t.Log("not root: the sandbox's memory is not searched for the secret")
	}
	// Nor in any file the sandbox can write (the rest is its image's,
	// read-only). The agent searches for it reversed, so that the
	// search does not carry it in.
	reversed := []byte(egressSecret)
	slices.Reverse(reversed)
	if out := bash(`s=$(printf '%s' '` + string(reversed) + `' | rev); grep -rlF -- "$s" /workspace /tmp /run /cache 2>/dev/null; echo searched`); strings.TrimSpace(out) != "searched" {
		t.Errorf("the secret is in the sandbox's files: %s", out)
	}
}

// TestCodegenEgressValidates: egress rules are checked as the entry is
// read, and they need a sandbox without a network.
func TestCodegenEgressValidates(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"egress": []any{map[string]any{"host": "proxy.golang.org"}}, "network": "bridge"},
			`config: key "egress": needs network: none (the proxy is the sandbox's one way out; with network bridge the rules would hold nothing back)`},
		{map[string]any{"egress": []any{map[string]any{"hots": "proxy.golang.org"}}},
			`config: key "egress": egress rule 0: unknown key "hots" (known: format, header, host, secret)`},
		{map[string]any{"egress": "proxy.golang.org"},
			`config: key "egress": egress: want a list of rules, got a string`},
	} {
		_, err := parseCodegenConfig(tc.cfg, DefaultHardening)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.cfg, err, tc.want)
		}
	}
	s, err := parseCodegenConfig(map[string]any{"egress": []any{map[string]any{"host": "proxy.golang.org"}}}, DefaultHardening)
	if err != nil || len(s.egress) != 1 || s.egress[0].Host != "proxy.golang.org" {
		t.Fatalf("a rule: %+v, %v", s.egress, err)
	}
}

// TestCodegenEgressHTTPS: a real client inside the sandbox (git, through
// libcurl) reaches an HTTPS host whose rule adds a credential: it trusts
// the proxy's answer for that host through the bundle sandboxd points it
// at (with the image's own roots alone it refuses the proxy's
// certificate), and the upstream, over TLS of its own, gets the header.
func TestCodegenEgressHTTPS(t *testing.T) {
	image := realImage(t) // git
	heard := make(chan string, 8)
	// httptest's certificate is for example.com, which the proxy checks
	// the upstream against.
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		heard <- r.Header.Get("Authorization")
		http.NotFound(w, r)
	}))
	defer api.Close()
	upstreams(t, map[string]*httptest.Server{"example.com:443": api})
	t.Setenv("EGRESS_TEST_TOKEN", egressSecret)
	p, _ := newTestProvider(t)
	got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{
		"image": image,
		"egress": []any{
			map[string]any{"host": "example.com:443", "secret": "EGRESS_TEST_TOKEN", "header": "Authorization", "format": "Bearer %s"},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	git := func(env string) string {
		return mcptest.CallText(t, cs, "Bash", map[string]any{"command": env + ` git ls-remote https://example.com/repo.git 2>&1; true`})
	}
	if out := git("GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt"); !strings.Contains(out, "server certificate verification failed") {
		t.Fatalf("git trusting the image's roots alone: %s", out)
	}
	out := git("")
	if !strings.Contains(out, "not found") || strings.Contains(out, "certificate") {
		t.Fatalf("git through the proxy: %s", out)
	}
	select {
	case h := <-heard:
		if h != "Bearer "+egressSecret {
			t.Fatalf("the upstream got Authorization %q, want the rule's", h)
		}
	default:
		t.Fatalf("the upstream was never asked; git said: %s", out)
	}
}
