package dockerbox

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// TestCodegenCancelLeavesNothing: a Provision cancelled or timed out at
// any point — before the create, while the engine creates the
// container, while it starts, while sandboxd comes up — leaves no
// container in any state, and no private directory. The deadlines grow
// until one Provision gets through (which is then released).
func TestCodegenCancelLeavesNothing(t *testing.T) {
	image := codegenImage(t)
	p, root := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	cli, err := p.client()
	if err != nil {
		t.Fatal(err)
	}
	ours := func() []string {
		list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelName+"="+name)})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, c := range list.Items {
			left = append(left, c.ID[:12]+" "+string(c.State)+" "+strings.Join(c.Names, ",")+" "+c.Labels[LabelID])
		}
		return left
	}
	delays := []time.Duration{0, 1, 2, 3, 5, 8, 12, 17, 25, 35, 50, 70, 100, 140, 200, 280, 400, 560, 800, 1100, 1500, 2000, 3000, 5000}
	for i, d := range delays {
		d *= time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), d)
		how := "deadline"
		if i%2 == 1 { // a cancel, as a killed client's is, not a deadline
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(d, cancel)
			how = "cancel"
		}
		start := time.Now()
		got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}})
		cancel()
		took := time.Since(start)
		if err == nil {
			t.Logf("%s after %v: provisioned (in %v); releasing it and stopping", how, d, took.Round(time.Millisecond))
			if err := p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}); err != nil {
				t.Fatal(err)
			}
			if left := ours(); len(left) > 0 {
				t.Errorf("containers left after Release: %v", left)
			}
			break
		}
		t.Logf("%s after %v: failed in %v: %v", how, d, took.Round(time.Millisecond), err)
		if left := ours(); len(left) > 0 {
			t.Errorf("%s after %v: containers left once Provision returned: %v", how, d, left)
		}
	}
	if list, _ := p.List(context.Background(), plugin.ListOptions{}); len(list) != 0 {
		t.Errorf("the provider holds %v", list)
	}
	assertNoDirs(t, root)
}

// assertNoDirs fails if any sandbox's private directory is left in root.
func assertNoDirs(t *testing.T, root string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("private directory left: %s", e.Name())
	}
}
