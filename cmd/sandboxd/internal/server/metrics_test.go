package server

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
	"github.com/altairalabs/promptkit-sandbox/internal/scrapetest"
	"github.com/altairalabs/promptkit-sandbox/internal/scrubtest"
)

// sample is the value of one series in a scrape (name with its labels,
// exactly as written), or "" when it is missing.
func sample(text, series string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// After a few calls, each outcome shows in the scrape: calls, errors and
// latency per tool, the denylist's and the path check's refusals, the
// redactions and the shells running.
func TestMetricsCountCalls(t *testing.T) {
	m := telemetry.NewMetrics()
	d := startDaemon(t, Config{Metrics: m, Secrets: map[string]string{"FAKE_API_KEY": "fake-api-key-0123456789"}})
	ms := httptest.NewServer(m.Handler()) // 127.0.0.1, a port of its own
	defer ms.Close()
	url := ms.URL + "/metrics"

	before := scrapetest.Get(t, url)
	for _, series := range []string{`sandboxd_tool_calls_total{tool="Read"}`, `sandboxd_tool_calls_total{tool="run_tests"}`,
		`sandboxd_path_refusals_total{tool="Write"}`, "sandboxd_denylist_refusals_total", "sandboxd_scrub_redactions_total", "sandboxd_shells_active"} {
		if got := sample(before, series); got != "0" {
			t.Errorf("before any call, %s = %q, want 0", series, got)
		}
	}

	cs := d.connect(t, streamable)
	os.WriteFile(filepath.Join(d.dir, "config.txt"), []byte("key = fake-api-key-0123456789\n"), 0o644)
	cred := scrubtest.Credentials[3] // a GitHub token
	os.WriteFile(filepath.Join(d.dir, "cred.txt"), []byte(cred.Line()+"\n"), 0o644)

	if got := ok(t, cs, "Read", map[string]any{"file_path": "config.txt"}); !strings.Contains(got, "[REDACTED:secret:FAKE_API_KEY]") {
		t.Fatalf("Read did not redact the secret: %q", got)
	}
	fails(t, cs, "Read", map[string]any{"file_path": "/etc/hostname"})
	fails(t, cs, "Read", map[string]any{"file_path": "../outside.txt"})
	fails(t, cs, "Bash", map[string]any{"command": "sudo id"})
	if got := ok(t, cs, "Bash", map[string]any{"command": "cat cred.txt"}); got != cred.Redacted()+"\n" {
		t.Fatalf("Bash: %q, want %q", got, cred.Redacted()+"\n")
	}
	ok(t, cs, "Glob", map[string]any{"pattern": "*.txt"})
	// Grep never matches the line with the secret, but shows it as
	// context, redacted.
	os.WriteFile(filepath.Join(d.dir, "grep.txt"), []byte("start\n"+cred.Line()+"\n"), 0o644)
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "^start$", "path": "grep.txt", "output_mode": "content", "-A": 1}); !strings.Contains(got, cred.Redacted()) {
		t.Fatalf("Grep did not show the redacted context: %q", got)
	}
	// A background shell's output is scrubbed, and counted, as it comes.
	catID := strings.TrimPrefix(ok(t, cs, "Bash", map[string]any{"command": "cat cred.txt", "run_in_background": true}), "Started background shell ")
	var catOut strings.Builder
	for deadline := time.Now().Add(30 * time.Second); ; {
		out := ok(t, cs, "BashOutput", map[string]any{"bash_id": catID})
		catOut.WriteString(out)
		if strings.Contains(out, "exited") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background cat did not finish: %q", catOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(catOut.String(), cred.Redacted()) {
		t.Fatalf("BashOutput did not show the redacted line: %q", catOut.String())
	}
	bg := ok(t, cs, "Bash", map[string]any{"command": "sleep 60", "run_in_background": true})
	id := strings.TrimPrefix(bg, "Started background shell ")

	after := scrapetest.Get(t, url)
	want := map[string]string{
		`sandboxd_tool_calls_total{tool="Read"}`:                 "3",
		`sandboxd_tool_errors_total{tool="Read"}`:                "2",
		`sandboxd_tool_call_duration_seconds_count{tool="Read"}`: "3",
		`sandboxd_path_refusals_total{tool="Read"}`:              "2",
		`sandboxd_tool_calls_total{tool="Bash"}`:                 "4",
		`sandboxd_tool_errors_total{tool="Bash"}`:                "1",
		`sandboxd_tool_call_duration_seconds_count{tool="Bash"}`: "4",
		`sandboxd_path_refusals_total{tool="Bash"}`:              "0",
		`sandboxd_tool_calls_total{tool="Glob"}`:                 "1",
		`sandboxd_tool_errors_total{tool="Glob"}`:                "0",
		`sandboxd_tool_call_duration_seconds_count{tool="Glob"}`: "1",
		`sandboxd_tool_calls_total{tool="Write"}`:                "0",
		"sandboxd_denylist_refusals_total":                       "1",
		`sandboxd_tool_calls_total{tool="Grep"}`:                 "1",
		`sandboxd_tool_errors_total{tool="BashOutput"}`:          "0",
		// Read's secret; the token in Bash's, Grep's and BashOutput's output.
		"sandboxd_scrub_redactions_total": "4",
		"sandboxd_shells_active":          "1", // the background sleep; the cat has ended
	}
	for series, v := range want {
		if got := sample(after, series); got != v {
			t.Errorf("%s = %q, want %s", series, got, v)
		}
	}
	// The latency histogram has its buckets, the last one holding every
	// call.
	if got := sample(after, `sandboxd_tool_call_duration_seconds_bucket{tool="Read",le="+Inf"}`); got != "3" {
		t.Errorf("Read's +Inf bucket = %q, want 3", got)
	}
	if got := sample(after, `sandboxd_tool_call_duration_seconds_bucket{tool="Read",le="1800"}`); got != "3" {
		t.Errorf("Read's 1800s bucket = %q, want 3", got)
	}

	ok(t, cs, "KillShell", map[string]any{"shell_id": id})
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := sample(scrapetest.Get(t, url), "sandboxd_shells_active")
		if got == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandboxd_shells_active = %s after KillShell, want 0", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
