package kubecluster

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestStartRespectsAndClearsOtherClusters: Start refuses to touch a
// cluster make kube-up started (it is someone's), and clears one whose
// starting test binary died without stopping it.
func TestStartRespectsAndClearsOtherClusters(t *testing.T) {
	Require(t)
	ctx := context.Background()
	l := layout(DefaultDir())

	detached, err := Start(ctx, Options{Log: t.Logf, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := StopDir(context.Background(), DefaultDir(), t.Logf); err != nil {
			t.Error(err)
		}
	})
	if c, err := Start(ctx, Options{Log: t.Logf}); err == nil {
		c.Stop(ctx)
		t.Fatal("Start took over a cluster started by make kube-up")
	} else if !strings.Contains(err.Error(), "make kube-down") {
		t.Errorf("Start beside a make kube-up cluster: %v; want it to say make kube-down", err)
	}
	if !anyRunning(detached.l) {
		t.Fatal("the refused Start stopped the make kube-up cluster")
	}

	// Now make it look like the cluster of a test binary that died: its
	// owner is a process that no longer exists.
	if err := os.WriteFile(l.owner(), []byte("pid 2147483647\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx, Options{Log: t.Logf})
	if err != nil {
		t.Fatalf("Start did not clear a dead test binary's cluster: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Error(err)
	}
}
