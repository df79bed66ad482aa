package kubebox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.srv.AddPod(testNS, "pending-0", nil, map[string]string{"hooks": c.hooks})
	c.srv.SetPhase(testNS, "pending-0", corev1.PodPending)

	// A pod whose container has no /bin/sh.
	nosh := startContainer(t, "")
	dockertest.Docker(t, "exec", nosh, "rm", "/bin/sh")
	c.srv.AddPod(testNS, "nosh-0", nil, map[string]string{"hooks": nosh})

	dir := t.TempDir()
	getOnly := c.srv.RestrictedKubeconfig(t, dir, testNS, "get pods")
	nothing := c.srv.RestrictedKubeconfig(t, dir, testNS)
	dead := deadKubeconfig(t, c.kubeconfig)

	eachTransport(t, func(t *testing.T, tr string) {
		for _, tc := range []struct {
			name string
			cfg  map[string]any
			kind sandbox.Kind
			says []string
		}{
			{"pod missing", map[string]any{"pod": "nope-0"}, sandbox.KindStart, []string{"pod nope-0 not found in namespace promptkit"}},
			{"namespace", map[string]any{"namespace": "other"}, sandbox.KindStart, []string{"pod hooks-0 not found in namespace other"}},
			{"not running", map[string]any{"pod": "pending-0"}, sandbox.KindStart, []string{"pod pending-0 in namespace promptkit is not running (phase Pending)"}},
			{"container", map[string]any{"container": "nope"}, sandbox.KindStart, []string{`pod hooks-0 in namespace promptkit has no container "nope" (its containers: hooks, zz-agent)`}},
			{"no shell", map[string]any{"pod": "nosh-0"}, sandbox.KindStart, []string{"pod nosh-0 (namespace promptkit, container hooks)", "/bin/sh"}},
			{"unreachable", map[string]any{"kubeconfig": dead}, sandbox.KindTransport, []string{"pod hooks-0 in namespace promptkit", "unreachable", strings.TrimPrefix(deadURL(t, dead), "https://")}},
			{"forbidden exec", map[string]any{"kubeconfig": getOnly}, sandbox.KindStart, []string{"pod hooks-0", "namespace promptkit", "forbidden", "pods/exec"}},
			{"forbidden get", map[string]any{"kubeconfig": nothing}, sandbox.KindStart, []string{"pod hooks-0 in namespace promptkit", "forbidden", "rbac.yaml"}},
			{"selector matches none", map[string]any{"selector": "app=none"}, sandbox.KindStart, []string{`no Running and Ready pod in namespace promptkit matches selector "app=none"`}},
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
		ctr := startContainer(t, "")
		c.srv.AddPod(testNS, name, nil, map[string]string{"hooks": ctr})
		gone := c.open(t, tr, map[string]any{"pod": name})
		c.srv.DeletePod(testNS, name)
		dockertest.Docker(t, "kill", ctr)
		_, err = gone.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		wantKind(t, err, sandbox.KindStart, "pod "+name+" not found in namespace promptkit")
	})
}

func TestSelectorResolvesAndReResolves(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		a, b := startContainer(t, "pod-a"), startContainer(t, "pod-b")
		sel := "app=sel-" + tr
		labels := map[string]string{"app": "sel-" + tr}
		// A pod that is not Ready is passed over.
		c.srv.AddPod(testNS, "sel-pending-"+tr, labels, map[string]string{"hooks": b})
		c.srv.SetPhase(testNS, "sel-pending-"+tr, corev1.PodPending)
		c.srv.AddPod(testNS, "sel-a-"+tr, labels, map[string]string{"hooks": a})
		sb := c.open(t, tr, map[string]any{"selector": sel})
		if got := hostname(t, sb); got != "pod-a" {
			t.Fatalf("ran in %q, want pod-a", got)
		}
		// The pod is replaced: the next call finds its successor.
		c.srv.DeletePod(testNS, "sel-a-"+tr)
		dockertest.Docker(t, "kill", a)
		c.srv.DeletePod(testNS, "sel-pending-"+tr)
		c.srv.AddPod(testNS, "sel-b-"+tr, labels, map[string]string{"hooks": b})
		if got := hostname(t, sb); got != "pod-b" {
			t.Fatalf("after the replacement ran in %q, want pod-b", got)
		}
		// No pod at all: a clear error.
		c.srv.DeletePod(testNS, "sel-b-"+tr)
		dockertest.Docker(t, "kill", b)
		_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		wantKind(t, err, sandbox.KindStart, "no Running and Ready pod in namespace promptkit matches selector \""+sel+"\"")
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
	kc := c.srv.RestrictedKubeconfig(t, t.TempDir(), testNS, allowed...)
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
		awaitNoLeftovers(t, c.hooks)
	})
}
