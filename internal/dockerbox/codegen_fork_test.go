package dockerbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestCodegenFork: three forks of a sandbox start with copies of its
// workspace (files, directories, a symlink kept a symlink, not followed)
// and then diverge: what each writes is its own, and the source's files
// stay as they were; the source runs on afterwards; an unknown id and a
// bad count are refused; nothing is left after the releases.
func TestCodegenFork(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	cleanupNamed(t, name)
	ctx := context.Background()
	src, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "cache": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, src.Endpoint, src.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "a.txt", "content": "from the source\n"})
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "sub/b.txt", "content": "nested\n"})
	if err := os.Symlink("/etc/shadow", filepath.Join(src.Workspace, "link")); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	forks, err := p.Fork(ctx, src.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("three forks in %v", time.Since(start).Round(time.Millisecond))
	if len(forks) != 3 {
		t.Fatalf("%d forks", len(forks))
	}
	for i, f := range forks {
		if f.ID == src.ID || f.Workspace == src.Workspace || f.Details["forked_from"] != src.ID {
			t.Errorf("fork %d: %+v", i, f)
		}
		for file, want := range map[string]string{"a.txt": "from the source\n", "sub/b.txt": "nested\n"} {
			if b, err := os.ReadFile(filepath.Join(f.Workspace, file)); err != nil || string(b) != want {
				t.Errorf("fork %d: %s holds %q (%v)", i, file, b, err)
			}
		}
		if target, err := os.Readlink(filepath.Join(f.Workspace, "link")); err != nil || target != "/etc/shadow" {
			t.Errorf("fork %d: link is %q (%v), want the symlink itself", i, target, err)
		}
		fc := mcptest.Connect(t, f.Endpoint, f.Token)
		mcptest.CallText(t, fc, "Read", map[string]any{"file_path": "a.txt"})
		mcptest.CallText(t, fc, "Write", map[string]any{"file_path": "a.txt", "content": "fork " + f.ID + "\n"})
	}
	for i, f := range forks {
		if b, _ := os.ReadFile(filepath.Join(f.Workspace, "a.txt")); string(b) != "fork "+f.ID+"\n" {
			t.Errorf("fork %d: a.txt %q after its own write", i, b)
		}
	}
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "a.txt"}); !strings.Contains(out, "from the source") {
		t.Errorf("the source after the forks wrote: %q", out)
	}
	if s := docker(t, "inspect", "-f", "{{.State.Status}}", src.Details["container"]); s != "running" {
		t.Errorf("the source is %s after the fork, want running", s)
	}
	if _, err := p.Fork(ctx, "cg-nosuch", 1); err == nil {
		t.Error("a fork of an unknown id")
	}
	if _, err := p.Fork(ctx, src.ID, provision.MaxForks+1); err == nil || !strings.Contains(err.Error(), "count") {
		t.Errorf("a fork of too many: %v", err)
	}
	for _, f := range append(forks, src) {
		if err := p.Release(ctx, f.ID, plugin.ReleaseOptions{}); err != nil {
			t.Error(err)
		}
	}
	assertNoContainers(t, name)
	assertNoContainers(t, "fork")
}

// BenchmarkCodegenFork is Fork of one sandbox (a workspace of 100 small
// files) to the fork's first tools/list answer, against a cold Provision
// to the same in the same run (the real image; releases not timed).
func BenchmarkCodegenFork(b *testing.B) {
	image := realImage(b)
	p, _ := newTestProvider(b)
	ctx := context.Background()
	cfg := map[string]any{"image": image, "cache": "none"}
	src, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "bench-fork", Mode: CodegenMode, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(src.Workspace, fmt.Sprintf("f%03d.go", i)), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	firstAnswer := func(b *testing.B, got plugin.Provisioned) {
		cs := mcptest.Connect(b, got.Endpoint, got.Token)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		_ = cs.Close()
		b.StopTimer()
		_ = p.Release(ctx, got.ID, plugin.ReleaseOptions{})
		b.StartTimer()
	}
	b.Run("fork", func(b *testing.B) {
		for b.Loop() {
			forks, err := p.Fork(ctx, src.ID, 1)
			if err != nil {
				b.Fatal(err)
			}
			firstAnswer(b, forks[0])
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "bench-fork", Mode: CodegenMode, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			firstAnswer(b, got)
		}
	})
}
