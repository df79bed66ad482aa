// Package metrics counts what the hook runtime does, for Prometheus: hook
// calls, denials, timeouts, failures and latency per sandbox and hook,
// and restarts of crashed plugin processes per plugin.
//
// A Collector is a prometheus.Collector of its own, registered nowhere:
// the program that embeds the runtime registers it in whatever registry
// it scrapes (its own, or prometheus.DefaultRegisterer), so two runtimes,
// or two tests, never count into each other. Every method is safe on a
// nil *Collector, which counts nothing.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metric names, as a scrape shows them.
const (
	MetricCalls    = "promptkit_sandbox_hook_calls_total"
	MetricDenials  = "promptkit_sandbox_hook_denials_total"
	MetricTimeouts = "promptkit_sandbox_hook_timeouts_total"
	MetricFailures = "promptkit_sandbox_hook_failures_total"
	MetricDuration = "promptkit_sandbox_hook_duration_seconds"
	MetricRestarts = "promptkit_sandbox_plugin_restarts_total"
)

// Label names.
const (
	LabelSandbox = "sandbox"
	LabelHook    = "hook"
	LabelPlugin  = "plugin"
)

// durationBuckets span a hook answering from a warm container (a few
// milliseconds) to the longest timeout a hook is likely to be given.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Outcome is how one hook call ended.
type Outcome int

const (
	// Allowed: the hook ran and its verdict allows (an observe hook that
	// ran cleanly is Allowed too: its verdict is not read).
	Allowed Outcome = iota
	// Denied: the hook ran and its verdict denies ("allow": false).
	Denied
	// TimedOut: the hook ran past its timeout and was killed.
	TimedOut
	// Failed: anything else that kept a verdict from being read — the
	// sandbox could not run the hook, the hook exited non-zero or
	// printed no valid verdict, the call was cancelled. A filter hook
	// that fails denies (the runtime is fail-closed), but it is counted
	// here, not as a denial.
	Failed
)

// Collector holds the runtime's metrics. Make one with New.
type Collector struct {
	calls    *prometheus.CounterVec
	denials  *prometheus.CounterVec
	timeouts *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
	restarts *prometheus.CounterVec
}

var _ prometheus.Collector = (*Collector)(nil)

// New makes a Collector whose series all start at zero.
func New() *Collector {
	hook := []string{LabelSandbox, LabelHook}
	return &Collector{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricCalls, Help: "Hook calls, by sandbox and hook: every outcome.",
		}, hook),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricDenials, Help: `Hook calls whose verdict denied ("allow": false), by sandbox and hook.`,
		}, hook),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricTimeouts, Help: "Hook calls killed at their timeout, by sandbox and hook.",
		}, hook),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricFailures, Help: "Hook calls that gave no verdict for another reason (could not run, non-zero exit, invalid verdict, cancelled), by sandbox and hook.",
		}, hook),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricDuration, Help: "How long hook calls took, in seconds, by sandbox and hook.", Buckets: durationBuckets,
		}, hook),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRestarts, Help: "Plugin processes started again after the previous one crashed or its connection broke, by plugin.",
		}, []string{LabelPlugin}),
	}
}

func (c *Collector) vecs() []prometheus.Collector {
	return []prometheus.Collector{c.calls, c.denials, c.timeouts, c.failures, c.duration, c.restarts}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vecs() {
		v.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.vecs() {
		v.Collect(ch)
	}
}

// Hook makes the series of a hook exist at zero, so a scrape lists
// every configured hook before it first runs.
func (c *Collector) Hook(sandbox, hook string) {
	if c == nil {
		return
	}
	c.calls.WithLabelValues(sandbox, hook)
	c.denials.WithLabelValues(sandbox, hook)
	c.timeouts.WithLabelValues(sandbox, hook)
	c.failures.WithLabelValues(sandbox, hook)
	c.duration.WithLabelValues(sandbox, hook)
}

// Call records one hook call that ended with o after elapsed.
func (c *Collector) Call(sandbox, hook string, o Outcome, elapsed time.Duration) {
	if c == nil {
		return
	}
	c.Hook(sandbox, hook) // the series it does not count in show zero
	c.calls.WithLabelValues(sandbox, hook).Inc()
	c.duration.WithLabelValues(sandbox, hook).Observe(elapsed.Seconds())
	switch o {
	case Denied:
		c.denials.WithLabelValues(sandbox, hook).Inc()
	case TimedOut:
		c.timeouts.WithLabelValues(sandbox, hook).Inc()
	case Failed:
		c.failures.WithLabelValues(sandbox, hook).Inc()
	}
}

// PluginRestarted records that plugin's process was started again.
func (c *Collector) PluginRestarted(plugin string) {
	if c == nil {
		return
	}
	c.restarts.WithLabelValues(plugin).Inc()
}
