// Package telemetry is sandboxd's operations side: Prometheus metrics,
// OpenTelemetry spans and request ids for every tool call, wrapped
// around the call in one place (Start and Call.End).
package telemetry

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The metric names, as a scrape shows them.
const (
	MetricCalls           = "sandboxd_tool_calls_total"
	MetricErrors          = "sandboxd_tool_errors_total"
	MetricDuration        = "sandboxd_tool_call_duration_seconds"
	MetricRedactions      = "sandboxd_scrub_redactions_total" // #nosec G101 -- a metric's name
	MetricDenylistRefusal = "sandboxd_denylist_refusals_total"
	MetricPathRefusal     = "sandboxd_path_refusals_total"
	MetricShellsActive    = "sandboxd_shells_active"
)

// durationBuckets span a Read of a small file (a millisecond) to the
// longest run_tests (30 minutes), in seconds.
var durationBuckets = []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 120, 300, 600, 1800}

// Metrics are sandboxd's Prometheus metrics, in a registry of their own
// (not the process-wide default), so each server and each test counts
// apart. The zero value is not usable; call NewMetrics.
type Metrics struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	errors     *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	redactions prometheus.Counter
	denylist   prometheus.Counter
	paths      *prometheus.CounterVec
	shells     atomic.Pointer[func() int]
}

// NewMetrics builds the metrics and their registry, with the Go runtime
// and process collectors beside them.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricCalls, Help: "Tool calls, by tool.",
		}, []string{"tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricErrors, Help: "Tool calls whose result is an error (isError), by tool; refusals included.",
		}, []string{"tool"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricDuration, Help: "How long tool calls took, in seconds, by tool.", Buckets: durationBuckets,
		}, []string{"tool"}),
		redactions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricRedactions, Help: "Secrets the scrubber redacted from what the agent sees ([REDACTED:kind] marks added).",
		}),
		denylist: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricDenylistRefusal, Help: "Bash commands the denylist refused.",
		}),
		paths: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricPathRefusal, Help: "Tool calls refused because a path leads out of the workspace, by tool.",
		}, []string{"tool"}),
	}
	shells := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricShellsActive, Help: "Commands running now: foreground Bash calls and background shells that have not ended.",
	}, func() float64 {
		if f := m.shells.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	m.reg.MustRegister(m.calls, m.errors, m.duration, m.redactions, m.denylist, m.paths, shells,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text (or OpenMetrics)
// format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Tool makes tool's series exist at zero, so a scrape lists every tool
// offered before it is first called.
func (m *Metrics) Tool(tool string) {
	m.calls.WithLabelValues(tool)
	m.errors.WithLabelValues(tool)
	m.duration.WithLabelValues(tool)
	m.paths.WithLabelValues(tool)
}

// Redacted counts n redactions.
func (m *Metrics) Redacted(n int) {
	if n > 0 {
		m.redactions.Add(float64(n))
	}
}

// ActiveShells sets what the active-shells gauge reads at each scrape.
func (m *Metrics) ActiveShells(f func() int) { m.shells.Store(&f) }
