// Package provisionbench measures a codegen provider under a burst of
// Provisions, for the benchmarks of both providers (issue 33: twenty
// sandboxes at once on Docker, ten on the cluster).
package provisionbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// IdleSettle is how long the sandboxes are left before their memory is
// read: their start-up's garbage collected, nothing connected.
const IdleSettle = 2 * time.Second

// AtOnce provisions n sandboxes at once with spec(i), cold, each loop of
// b, and reports the spread of Provision to first MCP answer (Provision
// returns once the endpoint has answered initialize) as p50-ms and
// p99-ms, and what each sandbox holds in memory once idle, as its
// provider's usage accounts it (idle-MiB/sandbox, the median). Release
// is not timed.
func AtOnce(b *testing.B, p plugin.Provider, n int, spec func(i int) plugin.ProvisionSpec) {
	b.Helper()
	ctx := context.Background()
	var all, idle []float64
	for b.Loop() {
		times := make([]time.Duration, n)
		got := make([]plugin.Provisioned, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				start := time.Now()
				got[i], errs[i] = p.Provision(ctx, spec(i))
				times[i] = time.Since(start)
			})
		}
		wg.Wait()
		b.StopTimer()
		release := func() {
			for _, s := range got {
				if s.ID != "" {
					if err := p.Release(ctx, s.ID, plugin.ReleaseOptions{}); err != nil {
						b.Error(err)
					}
				}
			}
		}
		for i, err := range errs {
			if err != nil {
				release()
				b.Fatalf("provision %d of %d: %v", i, n, err)
			}
		}
		for _, t := range times {
			all = append(all, float64(t.Milliseconds()))
		}
		time.Sleep(IdleSettle)
		mem, err := idleMemory(ctx, p, got)
		release()
		if err != nil {
			b.Fatal(err)
		}
		idle = append(idle, mem...)
		b.StartTimer()
	}
	slices.Sort(all)
	slices.Sort(idle)
	b.ReportMetric(Percentile(all, 50), "p50-ms")
	b.ReportMetric(Percentile(all, 99), "p99-ms")
	b.ReportMetric(Percentile(idle, 50), "idle-MiB/sandbox")
}

// idleMemory is what each of got holds in memory now, in MiB, as List's
// usage says.
func idleMemory(ctx context.Context, p plugin.Provider, got []plugin.Provisioned) ([]float64, error) {
	list, err := p.List(ctx, plugin.ListOptions{Usage: true})
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{}
	for _, s := range got {
		ours[s.ID] = true
	}
	var out []float64
	for _, s := range list {
		if !ours[s.ID] {
			continue
		}
		mem, err := strconv.ParseFloat(s.Details[provision.UsageMemory], 64)
		if err != nil {
			return nil, fmt.Errorf("sandbox %s reports no memory usage: %w (details %v)", s.ID, err, s.Details)
		}
		out = append(out, mem/(1<<20))
	}
	return out, nil
}

// Percentile is the p-th percentile of sorted (nearest rank); 0 for none.
func Percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(i, 0)]
}
