package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
)

// TestCodegenUpObserved: with metrics on and OTEL_EXPORTER_OTLP_ENDPOINT
// set, codegen up's sandbox serves sandboxd's metrics on a loopback port
// and sends its spans, by the plugin's relay, to the collector the host
// exports to: one trace from the CLI's provisioning through the plugin
// and the provider to sandboxd's start, though the container has no
// network.
func TestCodegenUpObserved(t *testing.T) {
	recv := otlptest.New(t)
	s := newCodegenSetup(t)
	f, err := os.OpenFile(s.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("      metrics: true\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s.env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL}
	_, r := s.startUp(t, "--foreground")
	useSandbox(t, r.Endpoint, r.Token, s.workspace, "observed.txt")

	metricsURL := r.Details["metrics"]
	if !strings.HasPrefix(metricsURL, "http://127.0.0.1:") {
		t.Fatalf("details.metrics = %q, want a loopback URL", metricsURL)
	}
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `sandboxd_tool_calls_total{tool="Write"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("metrics scrape: no %q in:\n%s", want, body)
	}

	names := []string{"codegen.provision", "plugin.provision", "docker.codegen", "sandboxd.start", "tools/call Write"}
	got := recv.WaitFor(20*time.Second, names...)
	for _, n := range names {
		if _, ok := got[n]; !ok {
			t.Fatalf("no span %q received; got %v", n, spanNames(recv.Spans()))
		}
	}
	chain := names[:4]
	for i := 1; i < len(chain); i++ {
		parent, child := got[chain[i-1]], got[chain[i]]
		if child.TraceID() != parent.TraceID() || child.ParentID() != parent.ID() {
			t.Errorf("span %q (trace %s, parent %s) is not a child of %q (trace %s, id %s)",
				chain[i], child.TraceID(), child.ParentID(), chain[i-1], parent.TraceID(), parent.ID())
		}
	}
}

func spanNames(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// traceChain follows names from a root span of the first name down, each
// next span a child of the one before; it returns as much of the chain as
// it found.
func traceChain(spans []otlptest.Span, names ...string) []otlptest.Span {
	var best []otlptest.Span
	for _, root := range spans {
		if root.Name != names[0] || root.ParentID() != "" && root.ParentID() != strings.Repeat("0", 16) {
			continue
		}
		chain := []otlptest.Span{root}
	next:
		for _, name := range names[1:] {
			for _, s := range spans {
				if s.Name == name && s.ParentID() == chain[len(chain)-1].ID() {
					chain = append(chain, s)
					continue next
				}
			}
			break
		}
		if len(chain) > len(best) {
			best = chain
		}
	}
	return best
}
