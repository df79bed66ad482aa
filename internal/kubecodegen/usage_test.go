package kubecodegen

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestParseCgroupUsage: cat's output of the cgroup files becomes the
// Usage details, the cat itself not counted; no limit, no limit key; the
// workspace's size when du finished; what is not a cgroup's output is
// refused, saying which file.
func TestParseCgroupUsage(t *testing.T) {
	cpu := "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"
	for in, want := range map[string]map[string]string{
		"v2\n10485760\n1073741824\n7\n" + cpu: {
			provision.UsageMemory: "10485760", provision.UsageMemoryMax: "1073741824",
			provision.UsagePids: "6", provision.UsageCPUSeconds: "2.500",
		},
		"v2 2048\t/workspace\n10485760\nmax\n7\n" + cpu: {
			provision.UsageMemory: "10485760", provision.UsageWorkspace: "2097152",
			provision.UsagePids: "6", provision.UsageCPUSeconds: "2.500",
		},
		"v1 \n4096\n9223372036854771712\n2\n1\n": {
			provision.UsageMemory: "4096", provision.UsagePids: "1", provision.UsageCPUSeconds: "0.000",
		},
		"v2\n4096\nmax\n1\n" + cpu: {
			provision.UsageMemory: "4096", provision.UsagePids: "0", provision.UsageCPUSeconds: "2.500",
		},
		"v1\n10485760\n536870912\n3\n1250000000\n": {
			provision.UsageMemory: "10485760", provision.UsageMemoryMax: "536870912",
			provision.UsagePids: "2", provision.UsageCPUSeconds: "1.250",
		},
		"v1\n4096\n9223372036854771712\n2\n1\n": {
			provision.UsageMemory: "4096", provision.UsagePids: "1", provision.UsageCPUSeconds: "0.000",
		},
	} {
		got, err := parseCgroupUsage(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
		} else if !maps.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
	for in, says := range map[string]string{
		"":                             "want the version",
		"v3\n1\n1\n1\n1":               "want the version",
		"v2\nx\nmax\n1\n" + cpu:        "memory in use",
		"v2\n1\nmax\nx\n" + cpu:        "pids.current",
		"v2\n1\nlots\n1\n" + cpu:       "memory limit",
		"v2\n1\nmax\n1\nuser_usec 3\n": "no usage_usec",
		"v1\n1\n1\n1\nsoon\n":          "cpuacct.usage",
	} {
		if _, err := parseCgroupUsage(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: err %v, want one naming %q", in, err, says)
		}
	}
}

// TestUsageOnTheRealCluster: a List that asks for usage reports, per
// sandbox, its memory (more than nothing, no more than the limit it
// was given), its processes (sandboxd at least), its CPU time and its
// workspace's size and limit, read
// with the provider's own RBAC; a List that does not ask reports none.
func TestUsageOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := newClusterSetup(ctx, t, nil)
	p := s.p
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Bash", map[string]any{"command": "sleep 30 >/dev/null 2>&1 &\necho started"})
	mcptest.CallText(t, cs, "Bash", map[string]any{"command": "head -c 3000000 /dev/urandom > blob"})

	list, err := p.List(ctx, plugin.ListOptions{Usage: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %v %+v", err, list)
	}
	d := list[0].Details
	t.Logf("usage: memory %s of %s bytes, %s pids, %s cpu seconds", d[provision.UsageMemory], d[provision.UsageMemoryMax], d[provision.UsagePids], d[provision.UsageCPUSeconds])
	num := func(key string) float64 {
		v, err := strconv.ParseFloat(d[key], 64)
		if err != nil {
			t.Fatalf("%s: %q is no number (details %v)", key, d[key], d)
		}
		return v
	}
	if mem, limit := num(provision.UsageMemory), num(provision.UsageMemoryMax); mem <= 0 || limit != 512<<20 || mem > limit {
		t.Errorf("memory %v of %v bytes; want more than 0, no more than the limit of 512Mi", mem, limit)
	}
	// sandboxd, its supervisor of the background shell and the sleep.
	if pids := num(provision.UsagePids); pids < 2 {
		t.Errorf("pids %v; want sandboxd and its sleep at least", pids)
	}
	if cpu := num(provision.UsageCPUSeconds); cpu <= 0 || cpu > 60 {
		t.Errorf("cpu seconds %v; want some, and less than the test's own time", cpu)
	}
	// The 3 MB blob and little else, under the emptyDir's sizeLimit.
	if ws, limit := num(provision.UsageWorkspace), num(provision.UsageWorkspaceMax); ws < 3e6 || ws > 4e6 || limit != 2<<30 {
		t.Errorf("workspace %v of %v bytes; want the 3 MB blob's, of the default 2Gi", ws, limit)
	}
	plain, err := p.List(ctx, plugin.ListOptions{})
	if err != nil || len(plain) != 1 || plain[0].Details[provision.UsageMemory] != "" {
		t.Errorf("List without usage: %v %+v", err, plain)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
}
