package dockerbox

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// scaleCount is how many sandboxes BenchmarkCodegenTwentyAtOnce asks for
// at once (issue 33).
const scaleCount = 20

// BenchmarkCodegenTwentyAtOnce provisions twenty sandboxes of the real
// image at once, cold, and reports the spread of Provision to first MCP
// answer (Provision returns once the endpoint has answered initialize)
// and what each sandbox holds in memory once idle, as the engine
// accounts it. Release is not timed.
//
//	go test -run '^$' -bench CodegenTwentyAtOnce -benchtime 1x -count 5 ./internal/dockerbox/
func BenchmarkCodegenTwentyAtOnce(b *testing.B) {
	image := realImage(b)
	p, _ := newTestProvider(b)
	var all, idle []float64
	for b.Loop() {
		times := make([]time.Duration, scaleCount)
		got := make([]plugin.Provisioned, scaleCount)
		errs := make([]error, scaleCount)
		var wg sync.WaitGroup
		for i := range scaleCount {
			wg.Go(func() {
				start := time.Now()
				got[i], errs[i] = p.Provision(context.Background(), plugin.ProvisionSpec{Name: uniqueName(b), Mode: CodegenMode, Config: map[string]any{"image": image}})
				times[i] = time.Since(start)
			})
		}
		wg.Wait()
		b.StopTimer()
		for i, err := range errs {
			if err != nil {
				b.Fatalf("provision %d of %d: %v", i, scaleCount, err)
			}
		}
		for _, t := range times {
			all = append(all, float64(t.Milliseconds()))
		}
		time.Sleep(2 * time.Second) // idle: start-up's garbage collected
		list, err := p.List(context.Background(), plugin.ListOptions{Usage: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range list {
			mem, err := strconv.ParseFloat(s.Details[provision.UsageMemory], 64)
			if err != nil {
				b.Fatalf("sandbox %s reports no memory usage: %v (%v)", s.ID, err, s.Details)
			}
			idle = append(idle, mem/(1<<20))
		}
		for _, s := range got {
			if err := p.Release(context.Background(), s.ID, plugin.ReleaseOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	slices.Sort(all)
	slices.Sort(idle)
	b.ReportMetric(percentile(all, 50), "p50-ms")
	b.ReportMetric(percentile(all, 99), "p99-ms")
	b.ReportMetric(percentile(idle, 50), "idle-MiB/sandbox")
}

// percentile is the p-th percentile of sorted (nearest rank).
func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(i, 0)]
}
