package kubebox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.pendingPod(t, "pending-0", nil)

	// A pod whose container has no /bin/sh.
	c.runPod(t, "nosh-0", nil)
	c.exec(t, "nosh-0", "rm", "/bin/sh")

	getOnly := c.restricted(t, "get-only", "get pods")
	nothing := c.restricted(t, "nothing")
	dead := deadKubeconfig(t, c.kubeconfig)
	ns := c.ns

	eachTransport(t, func(t *testing.T, tr string) {
		for _, tc := range []struct {
			name string
			cfg  map[string]any
			kind sandbox.Kind
			says []string
		}{
			{"pod missing", map[string]any{"pod": "nope-0"}, sandbox.KindStart, []string{"pod nope-0 not found in namespace " + ns}},
			{"namespace", map[string]any{"namespace": "other"}, sandbox.KindStart, []string{"pod hooks-0 not found in namespace other"}},
			{"not running", map[string]any{"pod": "pending-0"}, sandbox.KindStart, []string{"pod pending-0 in namespace " + ns + " is not running (phase Pending)"}},
			{"container", map[string]any{"container": "nope"}, sandbox.KindStart, []string{`pod hooks-0 in namespace ` + ns + ` has no container "nope" (its containers: hooks, zz-agent)`}},
			{"no shell", map[string]any{"pod": "nosh-0"}, sandbox.KindStart, []string{"pod nosh-0 (namespace " + ns + ", container hooks)", "/bin/sh"}},
			{"unreachable", map[string]any{"kubeconfig": dead}, sandbox.KindTransport, []string{"pod hooks-0 in namespace " + ns, "unreachable", strings.TrimPrefix(deadURL(t, dead), "https://")}},
			{"forbidden exec", map[string]any{"kubeconfig": getOnly}, sandbox.KindStart, []string{"pod hooks-0", "namespace " + ns, "forbidden", "pods/exec"}},
			{"forbidden get", map[string]any{"kubeconfig": nothing}, sandbox.KindStart, []string{"pod hooks-0 in namespace " + ns, "forbidden", "rbac.yaml"}},
			{"selector matches none", map[string]any{"selector": "app=none"}, sandbox.KindStart, []string{`no Running and Ready pod in namespace ` + ns + ` matches selector "app=none"`}},
		} {
			t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				start := time.Now()
				_, err := c.tryOpen(t, tr, tc.cfg)
				wantKind(t, err, tc.kind, tc.says...)
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("took %s", d)
				}
			})
		}
	})
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, nil)
		_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "no-such-hook"})
		wantKind(t, err, sandbox.KindStart, `command "no-such-hook": not found`, "pod hooks-0")
		_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{})
		wantKind(t, err, sandbox.KindStart, "empty command")

		// The pod goes away after the sandbox opened, its containers with
		// it (and the warm sessions' streams).
		name := "gone-" + tr
		c.runPod(t, name, nil)
		gone := c.open(t, tr, map[string]any{"pod": name})
		c.deletePod(t, name)
		_, err = gone.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		wantKind(t, err, sandbox.KindStart, "pod "+name+" not found in namespace "+c.ns)
	})
}

func TestSelectorResolvesAndReResolves(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sel := "app=sel-" + tr
		labels := map[string]string{"app": "sel-" + tr}
		a, b := "sel-a-"+tr, "sel-b-"+tr
		// A pod that is not Ready is passed over.
		c.pendingPod(t, "sel-pending-"+tr, labels)
		c.runPod(t, a, labels)
		sb := c.open(t, tr, map[string]any{"selector": sel})
		if got := hostname(t, sb); got != a {
			t.Fatalf("ran in %q, want %s", got, a)
		}
		// The pod is replaced: the next call finds its successor.
		c.deletePod(t, a)
		c.deletePod(t, "sel-pending-"+tr)
		c.runPod(t, b, labels)
		if got := hostname(t, sb); got != b {
			t.Fatalf("after the replacement ran in %q, want %s", got, b)
		}
		// No pod at all: a clear error.
		c.deletePod(t, b)
		_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		wantKind(t, err, sandbox.KindStart, "no Running and Ready pod in namespace "+c.ns+" matches selector \""+sel+"\"")
	})
}

func hostname(t *testing.T, sb *Sandbox) string {
	t.Helper()
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "hostname"})
	if err != nil {
		t.Fatalf("hostname: %v", err)
	}
	return strings.TrimSpace(string(resp.Stdout))
}

// deadKubeconfig is kubeconfig pointing at a loopback port nothing
// listens on.
func deadKubeconfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "server: https://") {
			line = line[:strings.Index(line, "https://")] + "https://" + addr
		}
		out = append(out, line)
	}
	path := filepath.Join(t.TempDir(), "dead-kubeconfig")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func deadURL(t *testing.T, kubeconfig string) string {
	t.Helper()
	data, _ := os.ReadFile(kubeconfig)
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "https://"); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	t.Fatal("no server in kubeconfig")
	return ""
}

// TestCallsAreEnough runs every path of the plugin as a user allowed
// exactly Calls (what deploy/kubernetes/rbac.yaml grants): a request
// beyond them would be forbidden and fail the test.
func TestCallsAreEnough(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	var allowed []string
	for _, call := range Calls {
		allowed = append(allowed, call.Verb+" "+call.Resource)
	}
	kc := c.restricted(t, "exactly-calls", allowed...)
	eachTransport(t, func(t *testing.T, tr string) {
		for _, cfg := range []map[string]any{{"kubeconfig": kc}, {"kubeconfig": kc, "selector": testLabels}} {
			sb := c.open(t, tr, cfg)
			if _, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"}); err != nil {
				t.Fatal(err)
			}
			_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "sleep", Args: []string{"300"}, Timeout: 300 * time.Millisecond})
			wantKind(t, err, sandbox.KindTimeout)
			_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "no-such-hook"})
			wantKind(t, err, sandbox.KindStart, "not found")
		}
		c.awaitNoLeftovers(t, testPod)
	})
}
