package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdout string
		err    error
		want   Outcome
	}{
		{"allow", `{"allow": true}`, nil, Allowed},
		{"deny", `{"allow": false, "reason": "no"}`, nil, Denied},
		{"no verdict", "observed\n", nil, Allowed},
		{"deny, then exit 1", `{"allow": false}`, &sandbox.ExitError{Code: 1}, Failed},
		{"timeout", "", sandbox.ContextError(timedOut(t), "command", time.Second), TimedOut},
		{"transport", "", sandbox.NewError(sandbox.KindTransport, "engine gone", nil), Failed},
		{"other", "", errors.New("x"), Failed},
	} {
		if got := OutcomeOf(sandbox.Response{Stdout: []byte(tc.stdout)}, tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func timedOut(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	t.Cleanup(cancel)
	<-ctx.Done()
	return ctx
}

// A nil Collector counts nothing and does not panic; Call makes the
// series it does not count in exist at zero.
func TestCollector(t *testing.T) {
	var none *Collector
	none.Call("s", "h", Denied, time.Second)
	none.PluginRestarted("p")
	none.Hook("s", "h")

	c := New()
	c.Call("box", "guard", TimedOut, 2*time.Second)
	want := `
# HELP promptkit_sandbox_hook_denials_total Hook calls whose verdict denied ("allow": false), by sandbox and hook.
# TYPE promptkit_sandbox_hook_denials_total counter
promptkit_sandbox_hook_denials_total{hook="guard",sandbox="box"} 0
# HELP promptkit_sandbox_hook_timeouts_total Hook calls killed at their timeout, by sandbox and hook.
# TYPE promptkit_sandbox_hook_timeouts_total counter
promptkit_sandbox_hook_timeouts_total{hook="guard",sandbox="box"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), MetricDenials, MetricTimeouts); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, MetricRestarts); n != 0 {
		t.Errorf("%d restart series before any restart", n)
	}
}
