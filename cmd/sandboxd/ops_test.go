package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The binary serves /healthz without a token beside MCP, and with
// --metrics-addr the metrics on a listener of their own, announced.
func TestHealthzAndMetricsListener(t *testing.T) {
	s := startHTTP(t, "--workspace", t.TempDir(), "--metrics-addr", "127.0.0.1:0")
	base := strings.TrimSuffix(s.url, "/mcp")
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	var metricsURL string
	for _, line := range s.out {
		if _, u, ok := strings.Cut(line, "Metrics (Prometheus): "); ok {
			metricsURL = u
		}
	}
	if !strings.HasPrefix(metricsURL, "http://127.0.0.1:") || metricsURL == base+"/metrics" {
		t.Fatalf("metrics URL %q: want its own loopback port (MCP is at %s)", metricsURL, base)
	}
	// The MCP listener does not serve the metrics.
	if code, _ := get(t, base+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics on the MCP listener without a token: %d, want 401", code)
	}
	cs := s.connect(t)
	callTool(t, cs, "Bash", map[string]any{"command": "echo hi"})
	code, body := get(t, metricsURL)
	if code != http.StatusOK || !strings.Contains(body, "\nsandboxd_tool_calls_total{tool=\"Bash\"} 1\n") {
		t.Errorf("scrape: %d, want Bash's call counted in:\n%s", code, body)
	}
	if !strings.Contains(body, "\ngo_goroutines ") || !strings.Contains(body, "\nprocess_resident_memory_bytes ") {
		t.Errorf("scrape lacks the Go and process collectors")
	}
}

// Without --metrics-addr nothing else listens and nothing is announced.
func TestMetricsOffByDefault(t *testing.T) {
	s := startHTTP(t, "--workspace", t.TempDir())
	for _, line := range s.out {
		if strings.Contains(line, "Metrics (Prometheus)") {
			t.Errorf("announced %q without --metrics-addr", line)
		}
	}
}

// With the standard OTEL_EXPORTER_OTLP_ENDPOINT the binary exports a span
// for its start and one per tool call, all of them sent by the time it
// has exited; the
// exporter's headers reach the collector but not the agent's shell.
func TestTracingFromEnvironment(t *testing.T) {
	recv := otlptest.New(t)
	s := startHTTPEnv(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=x-api-key=collector-key-0123456789",
	}, "--workspace", t.TempDir())
	cs := s.connect(t)
	if out := callTool(t, cs, "Bash", map[string]any{"command": "echo \"[$OTEL_EXPORTER_OTLP_HEADERS]\""}); out != "[]\n" {
		t.Errorf("the shell sees the exporter's headers: %q", out)
	}
	// Nor are they left in sandboxd's /proc/PID/environ: sealed as a
	// --secret-env value is.
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), "collector-key-0123456789") {
		t.Error("sandboxd's /proc/PID/environ holds the exporter's headers")
	}
	callTool(t, cs, "Glob", map[string]any{"pattern": "*"})
	cs.Close()
	stopGracefully(t, s.cmd)
	var names []string
	for _, sp := range recv.Spans() {
		names = append(names, sp.Name)
	}
	slices.Sort(names)
	if want := []string{"sandboxd.start", "tools/call Bash", "tools/call Glob"}; !slices.Equal(names, want) {
		t.Errorf("spans received by exit: %q, want %q", names, want)
	}
	if got := recv.Header().Get("X-Api-Key"); got != "collector-key-0123456789" {
		t.Errorf("the exporter sent x-api-key %q", got)
	}
}

func TestOTLPEndpointFlagIsChecked(t *testing.T) {
	var stderr strings.Builder
	cmd := exec.Command(binary(t), "--workspace", t.TempDir(), "--otlp-endpoint", "127.0.0.1:4318")
	cmd.Stderr = &stderr
	err := cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.Contains(stderr.String(), "--otlp-endpoint") {
		t.Errorf("a bad --otlp-endpoint: %v, %q; want exit 2 naming the flag", err, stderr.String())
	}
}
