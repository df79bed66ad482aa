package promptkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// Each hook process PromptKit runs through the adapter is counted by
// sandbox and command: allowed, denied by its verdict, timed out, failed.
func TestAdapterMetrics(t *testing.T) {
	m := metrics.New()
	a := directAdapter(t, promptkit.Options{Metrics: m})
	r := pksandbox.NewRegistry()
	if err := a.Register(r); err != nil {
		t.Fatal(err)
	}
	sb := mustOpen(t, r, "direct", "hooks", nil)
	for _, script := range []string{`echo '{"allow": true}'`, `echo '{"allow": false, "reason": "no"}'`, "exit 2"} {
		_, _ = spawnSh(t, sb, script)
	}
	_, _ = sb.Spawn(context.Background(), pksandbox.Request{Command: "/bin/sh", Args: []string{"-c", "sleep 30"}, Timeout: 200 * time.Millisecond})

	want := `
# HELP promptkit_sandbox_hook_calls_total Hook calls, by sandbox and hook: every outcome.
# TYPE promptkit_sandbox_hook_calls_total counter
promptkit_sandbox_hook_calls_total{hook="sh",sandbox="hooks"} 4
# HELP promptkit_sandbox_hook_denials_total Hook calls whose verdict denied ("allow": false), by sandbox and hook.
# TYPE promptkit_sandbox_hook_denials_total counter
promptkit_sandbox_hook_denials_total{hook="sh",sandbox="hooks"} 1
# HELP promptkit_sandbox_hook_failures_total Hook calls that gave no verdict for another reason (could not run, non-zero exit, invalid verdict, cancelled), by sandbox and hook.
# TYPE promptkit_sandbox_hook_failures_total counter
promptkit_sandbox_hook_failures_total{hook="sh",sandbox="hooks"} 1
# HELP promptkit_sandbox_hook_timeouts_total Hook calls killed at their timeout, by sandbox and hook.
# TYPE promptkit_sandbox_hook_timeouts_total counter
promptkit_sandbox_hook_timeouts_total{hook="sh",sandbox="hooks"} 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want),
		metrics.MetricCalls, metrics.MetricDenials, metrics.MetricFailures, metrics.MetricTimeouts); err != nil {
		t.Error(err)
	}
}
