package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// lister is what codegenUsage asks for the sandboxes: the plugin host.
type lister interface {
	List(ctx context.Context, opts plugin.ListOptions) ([]plugin.Provisioned, error)
}

// codegenUsage exports, on each scrape, the codegen sandboxes a serve
// holds and what each uses now, as its provider reports it in List
// (the usage.* details; see provision.UsageMemory). A sandbox's series
// exist while it does: a released one is gone from the next scrape.
type codegenUsage struct {
	host lister
	log  hclog.Logger

	sandboxes, memory, memoryMax, pids, cpu, workspace, workspaceMax *prometheus.Desc
}

// codegenScrapeTimeout bounds the List of one scrape: a slow engine
// costs the scrape its codegen series, never the scrape.
const codegenScrapeTimeout = 3 * time.Second

func newCodegenUsage(host lister, log hclog.Logger) *codegenUsage {
	per := []string{"sandbox", "mode", "id"}
	return &codegenUsage{
		host: host,
		log:  log,
		sandboxes: prometheus.NewDesc("promptkit_sandbox_codegen_sandboxes",
			"Codegen sandboxes held by this serve, by config entry, mode and state (running, paused, dead).",
			[]string{"sandbox", "mode", "state"}, nil),
		memory: prometheus.NewDesc("promptkit_sandbox_codegen_memory_bytes",
			"Memory a codegen sandbox uses now, its tmpfs page cache included.", per, nil),
		memoryMax: prometheus.NewDesc("promptkit_sandbox_codegen_memory_limit_bytes",
			"The memory limit of a codegen sandbox.", per, nil),
		pids: prometheus.NewDesc("promptkit_sandbox_codegen_pids",
			"Processes in a codegen sandbox now.", per, nil),
		cpu: prometheus.NewDesc("promptkit_sandbox_codegen_cpu_seconds_total",
			"CPU time a codegen sandbox has used since it started.", per, nil),
		workspace: prometheus.NewDesc("promptkit_sandbox_codegen_workspace_bytes",
			"Disk the files of a codegen sandbox's workspace take now.", per, nil),
		workspaceMax: prometheus.NewDesc("promptkit_sandbox_codegen_workspace_limit_bytes",
			"The limit on a codegen sandbox's workspace, where its provider sets one.", per, nil),
	}
}

func (c *codegenUsage) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sandboxes, c.memory, c.memoryMax, c.pids, c.cpu, c.workspace, c.workspaceMax} {
		ch <- d
	}
}

func (c *codegenUsage) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), codegenScrapeTimeout)
	defer cancel()
	list, err := c.host.List(ctx, plugin.ListOptions{Usage: true})
	if err != nil {
		// What was listed is still exported: one provider's failure
		// does not hide the others' sandboxes.
		c.log.Warn("metrics: listing the codegen sandboxes", "error", err)
	}
	type key struct{ sandbox, mode, state string }
	counts := map[key]int{}
	for _, p := range list {
		state := p.Details[provision.State]
		if strings.HasPrefix(state, provision.StateDead) {
			state = "dead"
		}
		counts[key{p.Name, p.Mode, state}]++
		labels := []string{p.Name, p.Mode, p.ID}
		for _, g := range []struct {
			desc *prometheus.Desc
			kind prometheus.ValueType
			key  string
		}{
			{c.memory, prometheus.GaugeValue, provision.UsageMemory},
			{c.memoryMax, prometheus.GaugeValue, provision.UsageMemoryMax},
			{c.pids, prometheus.GaugeValue, provision.UsagePids},
			{c.cpu, prometheus.CounterValue, provision.UsageCPUSeconds},
			{c.workspace, prometheus.GaugeValue, provision.UsageWorkspace},
			{c.workspaceMax, prometheus.GaugeValue, provision.UsageWorkspaceMax},
		} {
			v, err := strconv.ParseFloat(p.Details[g.key], 64)
			if err != nil {
				continue // not reported by this provider, or not now
			}
			ch <- prometheus.MustNewConstMetric(g.desc, g.kind, v, labels...)
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.sandboxes, prometheus.GaugeValue, float64(n), k.sandbox, k.mode, k.state)
	}
}
