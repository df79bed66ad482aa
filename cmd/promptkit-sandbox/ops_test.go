package main

import (
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
	"github.com/altairalabs/promptkit-sandbox/internal/scrapetest"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// metricsURL is the URL a serve logged it serves its metrics at.
var metricsURL = regexp.MustCompile(`serving metrics: url=(\S+)`)

// TestServeMetrics: a serve with --metrics-addr counts each exec call by
// sandbox and command, as the hook it stands for: allowed, denied (a
// verdict saying so), timed out, failed.
func TestServeMetrics(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	sock := shortTempDir(t) + "/serve.sock"
	srv := startServe(t, sock, nil, "--config", cfg, "--metrics-addr", "127.0.0.1:0")
	m := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("serve logged no metrics URL:\n%s", srv.stderr)
	}
	calls := []struct {
		args []string
		code int
	}{
		{[]string{"--", "sh", "-c", `echo '{"allow": true}'`}, 0},
		{[]string{"--", "sh", "-c", `echo '{"allow": false, "reason": "no"}'`}, 0},
		{[]string{"--timeout", "200ms", "--", "sh", "-c", "sleep 30"}, exitTimeout},
		{[]string{"--", "sh", "-c", "exit 3"}, 3},
		{[]string{"--", "true"}, 0},
	}
	for _, c := range calls {
		args := append([]string{"--socket", sock, "--config", cfg, "--sandbox", "host"}, c.args...)
		if r := runExec(t, isolated(t), nil, args...); r.code != c.code {
			t.Fatalf("exec %v: exit %d, want %d: %+v", c.args, r.code, c.code, r)
		}
	}
	body := scrapetest.Get(t, m[1])
	for _, want := range []string{
		`promptkit_sandbox_hook_calls_total{hook="sh",sandbox="host"} 4`,
		`promptkit_sandbox_hook_calls_total{hook="true",sandbox="host"} 1`,
		`promptkit_sandbox_hook_denials_total{hook="sh",sandbox="host"} 1`,
		`promptkit_sandbox_hook_timeouts_total{hook="sh",sandbox="host"} 1`,
		`promptkit_sandbox_hook_failures_total{hook="sh",sandbox="host"} 1`,
		`promptkit_sandbox_hook_failures_total{hook="true",sandbox="host"} 0`,
		`promptkit_sandbox_hook_duration_seconds_count{hook="sh",sandbox="host"} 4`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("the scrape has no %s:\n%s", want, scrapetest.Lines(body, "promptkit_sandbox_"))
		}
	}
	if !strings.Contains(body, "go_goroutines ") {
		t.Error("the scrape has no Go runtime metrics")
	}
}

// TestServeMetricsAddrDefaultsToLoopback: a bare port listens on
// 127.0.0.1 only; a port already taken stops serve before it opens
// anything.
func TestServeMetricsAddrDefaultsToLoopback(t *testing.T) {
	for in, want := range map[string]string{"9464": "127.0.0.1:9464", ":9464": "127.0.0.1:9464", "0.0.0.0:9464": "0.0.0.0:9464", "[::1]:0": "[::1]:0"} {
		if got, err := metricsListenAddr(in); err != nil || got != want {
			t.Errorf("metricsListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := metricsListenAddr("localhost"); err == nil {
		t.Error(`metricsListenAddr("localhost"): no error`)
	}
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	srv := startServe(t, shortTempDir(t)+"/serve.sock", nil, "--config", cfg, "--metrics-addr", "0")
	taken := strings.TrimPrefix(metricsURL.FindStringSubmatch(srv.stderr.String())[1], "http://")
	taken = strings.TrimSuffix(taken, pathMetrics)
	out, err := exec.Command(cliBinary(t), "serve", "--config", cfg, "--socket", shortTempDir(t)+"/s.sock", "--metrics-addr", taken).CombinedOutput()
	if !strings.HasPrefix(taken, "127.0.0.1:") {
		t.Errorf("--metrics-addr 0 listens on %s, want 127.0.0.1", taken)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "--metrics-addr") {
		t.Errorf("serve with --metrics-addr %s taken: %v\n%s", taken, err, out)
	}
}

// TestHookRunExportsItsSpan: hook run, with the standard OTEL variable
// set, exports a span of the hook call.
func TestHookRunExportsItsSpan(t *testing.T) {
	recv := otlptest.New(t)
	cfg := writeConfig(t, shortTempDir(t), `spec:
  hooks:
    guard:
      command: sh
      args: [-c, 'cat >/dev/null; echo "{\"allow\": false, \"reason\": \"no\"}"']
      hook: provider
      phases: [before_call]
`)
	cmd := exec.Command(cliBinary(t), "hook", "run", "--config", cfg, "--hook", "guard", "--phase", "before_call")
	cmd.Env = append(isolated(t), tracing.EnvOTLPEndpoint+"="+recv.URL, "PATH=/usr/bin:/bin")
	cmd.Stdin = strings.NewReader(`{"request": {"ProviderID": "p"}}`)
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitDenied {
		t.Fatalf("hook run: %v\n%s", err, out)
	}
	// Sent before it exited.
	spans := recv.WaitFor(0, "hook guard", "direct.exec")
	hook, backend := spans["hook guard"], spans["direct.exec"]
	if hook.Span == nil || backend.Span == nil {
		t.Fatalf("spans received: %v", recv.Spans())
	}
	if hook.Service != "promptkit-sandbox" || hook.Attr("promptkit.hook.outcome") != "deny" {
		t.Errorf("hook span: service %q, outcome %q", hook.Service, hook.Attr("promptkit.hook.outcome"))
	}
	if backend.ParentID() != hook.ID() || backend.TraceID() != hook.TraceID() {
		t.Errorf("direct.exec is not the hook span's child: parent %s, want %s", backend.ParentID(), hook.ID())
	}
}
