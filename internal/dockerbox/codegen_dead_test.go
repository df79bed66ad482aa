package dockerbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestCodegenDiesAtStart: a container that exits while sandboxd should
// be coming up fails the provision at once, quoting what it said and
// its exit code, not at the provision's timeout; nothing is left.
func TestCodegenDiesAtStart(t *testing.T) {
	image := codegenImage(t)
	p, root := newTestProvider(t)
	p.hard.Entrypoint = []string{"/bin/sh", "-c", "echo sandboxd cannot start here >&2; exit 7"}
	name := uniqueName(t)
	cleanupNamed(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}})
	took := time.Since(start)
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "sandboxd cannot start here (exit code 7)") {
		t.Errorf("err = %v, want ErrStart quoting the output and exit code 7", err)
	}
	if took > 15*time.Second {
		t.Errorf("the provision failed %v after it began; the container died at once", took)
	}
	t.Logf("failed in %v: %v", took.Round(time.Millisecond), err)
	assertNoContainers(t, name)
	assertNoDirs(t, root)
}

// TestCodegenDiesLater: a sandbox whose container dies after it was
// handed out is listed dead, with its exit code, until released.
func TestCodegenDiesLater(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image}})
	if err != nil {
		t.Fatal(err)
	}
	state := func() string {
		list, _ := p.List(context.Background(), plugin.ListOptions{})
		if len(list) != 1 {
			t.Fatalf("List: %+v", list)
		}
		return list[0].Details[provision.State]
	}
	if st := state(); st != provision.StateRunning {
		t.Errorf("state of a live sandbox: %q", st)
	}
	docker(t, "kill", "--signal", "KILL", got.Details["container"])
	deadline := time.Now().Add(15 * time.Second)
	for !strings.HasPrefix(state(), provision.StateDead) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if st := state(); !strings.HasPrefix(st, provision.StateDead+"stopped; its output ended: ") || !strings.HasSuffix(st, "(exit code 137)") {
		t.Errorf("state after the container's SIGKILL: %q, want dead with exit code 137", st)
	}
	if err := p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Errorf("Release of a dead sandbox: %v", err)
	}
	assertNoContainers(t, name)
}
