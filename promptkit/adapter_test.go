package promptkit_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	pksandbox "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox"
	pkdirect "github.com/AltairaLabs/PromptKit/runtime/hooks/sandbox/direct"
	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// directAdapter is an adapter that finds no plugins and serves direct
// only: enough for everything that does not need a container.
func directAdapter(t testing.TB, opts promptkit.Options) *promptkit.Adapter {
	t.Helper()
	opts.PluginDirs = []string{t.TempDir()}
	opts.ReplaceDirect = true
	if opts.BaseDir == "" {
		opts.BaseDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	a, err := promptkit.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func mustOpen(t testing.TB, r *pksandbox.Registry, mode, name string, cfg map[string]any) pksandbox.Sandbox {
	t.Helper()
	f, err := r.Lookup(mode)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := f(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func spawnSh(t testing.TB, sb pksandbox.Sandbox, script string) (pksandbox.Response, error) {
	t.Helper()
	return sb.Spawn(context.Background(), pksandbox.Request{Command: "/bin/sh", Args: []string{"-c", script}})
}

func TestRegisterIsIdempotentAndAdaptersDoNotCollide(t *testing.T) {
	one, two := directAdapter(t, promptkit.Options{}), directAdapter(t, promptkit.Options{})
	shared, own := pksandbox.NewRegistry(), pksandbox.NewRegistry()
	for range 3 {
		if err := one.Register(shared); err != nil {
			t.Fatalf("Register again: %v", err)
		}
	}
	var taken *promptkit.ModeTakenError
	if err := two.Register(shared); !errors.As(err, &taken) || taken.Mode != "direct" {
		t.Fatalf("second adapter in the same registry: err = %v; want a *ModeTakenError for direct", err)
	}
	if err := two.Register(own); err != nil {
		t.Fatal(err)
	}

	// The same entry through each adapter: two sandboxes, one each.
	a := mustOpen(t, shared, "direct", "hooks", nil)
	b := mustOpen(t, own, "direct", "hooks", nil)
	if one.Stats().Opened != 1 || two.Stats().Opened != 1 {
		t.Fatalf("opened: %+v and %+v; want one sandbox in each adapter", one.Stats(), two.Stats())
	}
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := spawnSh(t, a, "true"); !errors.Is(err, promptkit.ErrClosed) || !errors.Is(err, sandbox.ErrStart) {
		t.Errorf("spawn through a closed adapter: err = %v; want ErrClosed, a could-not-start error", err)
	}
	if resp, err := spawnSh(t, b, "echo still here"); err != nil || string(resp.Stdout) != "still here\n" {
		t.Errorf("the other adapter's sandbox after the first closed: %q, %v", resp.Stdout, err)
	}
	// A closed adapter's modes are free again.
	if err := two.Register(shared); err != nil {
		t.Errorf("Register where a closed adapter was: %v", err)
	}
	if err := one.Register(own); !errors.Is(err, promptkit.ErrClosed) {
		t.Errorf("Register of a closed adapter: err = %v; want ErrClosed", err)
	}
}

func TestRegisterWithoutPluginsSaysWhereItLooked(t *testing.T) {
	dir := t.TempDir()
	a, err := promptkit.New(promptkit.Options{PluginDirs: []string{dir}, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var none *promptkit.NoModesError
	err = a.Register(pksandbox.NewRegistry())
	if !errors.As(err, &none) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v; want a *NoModesError naming %s", err, dir)
	}
}

// TestRegisterLeavesOtherBackendsAlone: PromptKit's example backends
// register docker_run and friends; the adapter does not silently take a
// mode someone else registered.
func TestRegisterLeavesOtherBackendsAlone(t *testing.T) {
	a := newAdapter(t, t.TempDir(), nil)
	r := pksandbox.NewRegistry()
	theirs := func(string, map[string]any) (pksandbox.Sandbox, error) { return pkdirect.New("theirs"), nil }
	if err := r.Register("docker_run", theirs); err != nil {
		t.Fatal(err)
	}
	var taken *promptkit.ModeTakenError
	if err := a.Register(r); !errors.As(err, &taken) || taken.Mode != "docker_run" || taken.By != "another backend" {
		t.Fatalf("err = %v; want docker_run taken by another backend", err)
	}
	want := []string{"direct", "docker_exec", "docker_run", "kubectl_exec"}
	if got := a.Modes(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Modes() = %v, want %v", got, want)
	}
}

// TestSandboxesAreSharedByResolvedEntry: the same entry shares one
// sandbox; an entry whose ${VAR} resolves differently gets its own; a
// handle's Close releases only its reference.
func TestSandboxesAreSharedByResolvedEntry(t *testing.T) {
	var mu sync.Mutex
	env := map[string]string{"WORKDIR": t.TempDir()}
	a := directAdapter(t, promptkit.Options{LookupEnv: func(k string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		v, ok := env[k]
		return v, ok
	}})
	r := pksandbox.NewRegistry()
	if err := a.Register(r); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mode": "direct", "workdir": "${WORKDIR}"}
	first := mustOpen(t, r, "direct", "hooks", cfg)
	second := mustOpen(t, r, "direct", "hooks", cfg)
	if s := a.Stats(); s.Opened != 1 || s.Reused != 1 || s.Sandboxes != 1 {
		t.Fatalf("stats after two loads: %+v; want one sandbox, reused once", s)
	}
	resp, err := spawnSh(t, second, "pwd")
	if err != nil || strings.TrimSpace(string(resp.Stdout)) != env["WORKDIR"] {
		t.Fatalf("pwd = %q, %v; want the expanded workdir %s", resp.Stdout, err, env["WORKDIR"])
	}
	mu.Lock()
	env["WORKDIR"] = t.TempDir()
	mu.Unlock()
	third := mustOpen(t, r, "direct", "hooks", cfg)
	if s := a.Stats(); s.Opened != 2 || s.Sandboxes != 2 {
		t.Fatalf("stats after the entry changed: %+v; want a second sandbox", s)
	}
	for _, h := range []pksandbox.Sandbox{first, second, third} {
		if err := h.(pksandbox.Closer).Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s := a.Stats(); s.Sandboxes != 0 {
		t.Errorf("stats after every handle closed: %+v; want no sandbox open", s)
	}
	if _, err := spawnSh(t, first, "true"); !errors.Is(err, promptkit.ErrClosed) {
		t.Errorf("spawn on a closed handle: %v; want ErrClosed", err)
	}
}

func TestEntryProblemsAreReportedByKey(t *testing.T) {
	a := directAdapter(t, promptkit.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	_, err := a.Factory("docker_run")("runner", map[string]any{"mode": "docker_run", "image": "${HOOK_IMAGE}", "open_timeout": "never"})
	if !errors.Is(err, config.ErrEntry) {
		t.Fatalf("err = %v; want an entry error", err)
	}
	want := `sandbox "runner": 2 problems:
  - environment variable HOOK_IMAGE is not set (used in key "image")
  - key "open_timeout" must be a positive duration such as "30s", got "never"`
	if err.Error() != want {
		t.Errorf("err:\n%s\nwant:\n%s", err, want)
	}
}

func TestTruncatedOutputIsLoggedAndCounted(t *testing.T) {
	var logs bytes.Buffer
	a := directAdapter(t, promptkit.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})})
	sb, err := a.Factory("direct")("capped", map[string]any{"mode": "direct", "output_limit": 1024})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := spawnSh(t, sb, "head -c 5000 /dev/zero; head -c 10 /dev/zero >&2")
	if err != nil || len(resp.Stdout) != 1024 || len(resp.Stderr) != 10 {
		t.Fatalf("stdout %d bytes, stderr %d, err %v; want 1024 and 10", len(resp.Stdout), len(resp.Stderr), err)
	}
	if s := a.Stats(); s.StdoutTruncated != 1 || s.StderrTruncated != 0 || s.Spawns != 1 {
		t.Errorf("stats = %+v; want one stdout truncation in one spawn", s)
	}
	for _, want := range []string{"[WARN]", "hook output truncated", "sandbox=capped", "command=/bin/sh", "stream=stdout", "kept_bytes=1024"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestRelativeCommandResolvesAgainstBaseDir: with ReplaceDirect, a
// relative hook command in a direct sandbox means a file in BaseDir, as
// in our own loader it means one beside the config; PromptKit's direct
// resolves it against the working directory. (The documented difference.)
func TestRelativeCommandResolvesAgainstBaseDir(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "hook.sh"), []byte("#!/bin/sh\necho '{\"allow\": true}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := directAdapter(t, promptkit.Options{BaseDir: base})
	sb, err := a.Factory("direct")("local", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := pksandbox.Request{Command: "./hook.sh"}
	if resp, err := sb.Spawn(context.Background(), req); err != nil || string(resp.Stdout) != "{\"allow\": true}\n" {
		t.Errorf("ours: %q, %v", resp.Stdout, err)
	}
	if _, err := os.Stat("hook.sh"); err == nil {
		t.Fatal("test needs a working directory without hook.sh")
	}
	if resp, _ := pkdirect.New("theirs").Spawn(context.Background(), req); resp.Err == nil {
		t.Errorf("PromptKit's direct found ./hook.sh in the working directory; the documented difference is gone")
	}
}

// TestConcurrentLoadsOpenOnce: loads racing for the same entry wait for
// one open and share it.
func TestConcurrentLoadsOpenOnce(t *testing.T) {
	a := directAdapter(t, promptkit.Options{})
	f := a.Factory("direct")
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			sb, err := f("hooks", map[string]any{"timeout": "5s"})
			if err != nil {
				t.Error(err)
				return
			}
			if resp, err := spawnSh(t, sb, "echo ok"); err != nil || string(resp.Stdout) != "ok\n" {
				t.Errorf("spawn: %q, %v", resp.Stdout, err)
			}
		})
	}
	wg.Wait()
	if s := a.Stats(); s.Opened != 1 || s.Reused != 15 || s.Spawns != 16 {
		t.Errorf("stats = %+v; want one open shared by 16 loads", s)
	}
}
