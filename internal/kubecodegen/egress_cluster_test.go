package kubecodegen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/egress/egresstest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// egressSecret is what the proxy adds to requests to api.test.
const egressSecret = "kube-egress-test-s3cret-value"

// TestEgressOnTheRealCluster: a sandbox with egress rules, whose Pod
// may dial nothing (network: none), reaches an allowed host through its
// proxy in this process, over the tunnel the plugin holds to sandboxd,
// and nothing else; a host whose rule names a secret gets it, though it
// is nowhere in the Pod, its Secret or the agent's environment, and an
// answer quoting it comes back scrubbed; an HTTPS host whose rule adds a
// credential is trusted through the bundle in the Secret. After a pause
// and a resume (a new Pod), the plugin dials the tunnel again.
func TestEgressOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	deps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "module %s from deps", r.URL.Path)
	}))
	defer deps.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "api saw Authorization=%q", r.Header.Get("Authorization"))
	}))
	defer api.Close()
	heard := make(chan string, 8)
	tlsAPI := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		heard <- r.Header.Get("Authorization")
		http.NotFound(w, r)
	}))
	defer tlsAPI.Close()
	oldDial, oldRoots := egressDial, egressRoots
	egressDial, egressRoots = egresstest.Upstreams(map[string]*httptest.Server{
		"deps.test:80": deps, "api.test:80": api, "example.com:443": tlsAPI,
	})
	t.Cleanup(func() { egressDial, egressRoots = oldDial, oldRoots })
	t.Setenv("KUBE_EGRESS_TEST_TOKEN", egressSecret)

	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	cfg := map[string]any{"egress": []any{
		map[string]any{"host": "deps.test"},
		map[string]any{"host": "api.test:80", "secret": "KUBE_EGRESS_TEST_TOKEN", "header": "Authorization", "format": "Bearer %s"},
		map[string]any{"host": "example.com:443", "secret": "KUBE_EGRESS_TEST_TOKEN", "header": "Authorization", "format": "Bearer %s"},
	}}
	for k, v := range s.cfg {
		cfg[k] = v
	}
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: cfg, WorkspaceVolume: "egress"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "deps.test, api.test:80 (+Authorization), example.com:443 (+Authorization)"; got.Details["egress"] != want {
		t.Errorf("details egress = %q, want %q", got.Details["egress"], want)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	bash := func(cmd string) string {
		return mcptest.CallText(t, cs, "Bash", map[string]any{"command": cmd})
	}
	get := func(url, host string) string { return egresstest.Get(t, cs, url, host) }
	allowed := func(when string) {
		t.Helper()
		if out := get("http://deps.test/golang.org/x/mod", "deps.test"); !strings.Contains(out, "200 OK") || !strings.Contains(out, "module /golang.org/x/mod from deps") {
			t.Errorf("an allowed host, %s: %s", when, out)
		}
	}
	allowed("first")
	denied := get("http://example.com/", "example.com")
	if !strings.Contains(denied, "403 Forbidden") || !strings.Contains(denied, "promptkit-sandbox egress: example.com:80 is not allowed by this sandbox's egress policy") {
		t.Errorf("a host no rule allows: %s", denied)
	}
	if out := get("http://api.test/user", "api.test"); !strings.Contains(out, `api saw Authorization="Bearer `) || strings.Contains(out, egressSecret) {
		t.Errorf("a host whose rule adds the secret: %s", out)
	}
	if out := bash(`git ls-remote https://example.com/repo.git 2>&1; true`); !strings.Contains(out, "not found") || strings.Contains(out, "certificate") {
		t.Errorf("git over HTTPS through the proxy: %s", out)
	}
	select {
	case h := <-heard:
		if h != "Bearer "+egressSecret {
			t.Errorf("the HTTPS upstream got Authorization %q, want the rule's", h)
		}
	default:
		t.Error("the HTTPS upstream was never asked")
	}
	// Nowhere inside: not in the agent's environment, the Pod's spec or
	// its Secret.
	pod, err := s.k.Client.CoreV1().Pods(s.ns).Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := s.k.Client.CoreV1().Secrets(s.ns).Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podJSON, _ := json.Marshal(pod)
	secretJSON, _ := json.Marshal(secret)
	for what, where := range map[string]string{"env": bash(`env`), "the Pod": string(podJSON), "the Secret": string(secretJSON)} {
		if strings.Contains(where, egressSecret) || strings.Contains(where, "KUBE_EGRESS_TEST_TOKEN") {
			t.Errorf("the secret is in %s", what)
		}
	}
	if out := bash(`echo "$HTTP_PROXY $SSL_CERT_FILE"; grep -c 'BEGIN CERTIFICATE' "$SSL_CERT_FILE"`); !strings.Contains(out, "http://127.0.0.1:3128 /run/sandboxd/egress-ca.pem") {
		t.Errorf("the agent's proxy settings: %s", out)
	}
	// Nor in the memory of the Pod's processes, sandboxd's included, as
	// a core dump would hold it (read from the node, this machine, as
	// root may), nor in any file the sandbox can write, searched for
	// spelt backwards so that the search does not carry it in.
	if os.Geteuid() == 0 {
		if where := egresstest.MemoryHolding(t, egresstest.CgroupProcesses("pod"+string(pod.UID)), []byte(egressSecret)); where != "" {
			t.Errorf("the secret is in the memory of %s", where)
		}
	} else {
		t.Log("not root: the Pod's memory is not searched for the secret")
	}
	reversed := []byte(egressSecret)
	slices.Reverse(reversed)
	if out := bash(`s=$(printf '%s' '` + string(reversed) + `' | rev); grep -rlF -- "$s" /workspace /tmp /run 2>/dev/null; echo searched`); strings.TrimSpace(out) != "searched" {
		t.Errorf("the secret is in the sandbox's files: %s", out)
	}

	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Resume(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("Resume took %v", time.Since(start).Round(time.Millisecond))
	cs = mcptest.Connect(t, got.Endpoint, got.Token)
	allowed("after a resume")
}
