package dockerbox

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func openRun(t *testing.T, name string, cfg map[string]any) *RunSandbox {
	t.Helper()
	cleanupNamed(t, name)
	if _, ok := cfg["image"]; !ok {
		cfg["image"] = busyboxImage(t)
	}
	sb, err := RunFactory(context.Background(), name, cfg)
	if err != nil {
		t.Fatalf("RunFactory: %v", err)
	}
	t.Cleanup(func() { sb.(*RunSandbox).Close() })
	return sb.(*RunSandbox)
}

func TestRunStdinStdoutStderrExitCode(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh",
		Args:    []string{"-c", "cat; echo to-stderr >&2; exit 3"},
		Stdin:   []byte("hello from stdin\n"),
	})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 3 {
		t.Fatalf("err = %v, want exit code 3", err)
	}
	if resp.Err != err {
		t.Errorf("resp.Err = %v, want %v", resp.Err, err)
	}
	if got := string(resp.Stdout); got != "hello from stdin\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(resp.Stderr); got != "to-stderr\n" {
		t.Errorf("stderr = %q", got)
	}
	settle(sb)
	assertNoContainers(t, name)

	resp, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
	if err != nil || resp.Stdout != nil || resp.Stderr != nil {
		t.Fatalf("true: err = %v, stdout %q, stderr %q", err, resp.Stdout, resp.Stderr)
	}
	settle(sb)
	assertNoContainers(t, name)
}

func TestRunEnvReachesContainer(t *testing.T) {
	t.Setenv("PKS_TEST_FORWARDED", "from-plugin-env")
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"env": []any{"CFG_VAR=cfg", "PKS_TEST_FORWARDED", "PKS_TEST_UNSET_XYZ", "OVERRIDE=cfg"}})
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh",
		Args:    []string{"-c", `echo "$REQ_VAR|$CFG_VAR|$PKS_TEST_FORWARDED|${PKS_TEST_UNSET_XYZ-unset}|$OVERRIDE"`},
		Env:     []string{"REQ_VAR=req value", "OVERRIDE=req"},
	})
	if err != nil {
		t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
	}
	if got, want := string(resp.Stdout), "req value|cfg|from-plugin-env|unset|req\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	// What it sets, it reports, for the host to redact.
	if got, want := sb.ForwardedEnv(), []string{"CFG_VAR=cfg", "PKS_TEST_FORWARDED=from-plugin-env", "OVERRIDE=cfg"}; !slices.Equal(got, want) {
		t.Errorf("ForwardedEnv = %q, want %q", got, want)
	}
}

func TestRunSafeDefaults(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	// No network but loopback, all capabilities dropped, no new privileges.
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh",
		Args:    []string{"-c", `ls /sys/class/net | tr '\n' ' '; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status | tr -s '\t ' ' '; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max`},
	})
	if err != nil {
		t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
	}
	want := "lo CapEff: 0000000000000000\nNoNewPrivs: 1\n256\n"
	if got := string(resp.Stdout); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestRunRequestTimeoutWins(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"timeout": "1m"})
	_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "sleep", Args: []string{"60"}, Timeout: 500 * time.Millisecond})
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.Contains(err.Error(), "timed out after 500ms") {
		t.Fatalf("err = %v, want timed out after 500ms", err)
	}
	assertNoContainersSoon(t, name) // removed off the call's path
}

func TestRunMissingImage(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	const img = "promptkit-sandbox-test/does-not-exist:1.0"
	_, err := RunFactory(context.Background(), uniqueName(t), map[string]any{"image": img})
	if !errors.Is(err, sandbox.ErrStart) {
		t.Fatalf("err = %v, want ErrStart", err)
	}
	if !strings.Contains(err.Error(), "image "+img+" is not present locally") {
		t.Errorf("err = %q, want it to name the image", err)
	}

	// The image disappears after the sandbox opened: the call says so.
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	sb.set.image = img
	_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "image "+img+" is not present locally") {
		t.Fatalf("Spawn err = %v, want ErrStart naming the image", err)
	}
	assertNoContainers(t, name)
}

func TestRunLargeStdoutIntact(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	const size = 32 << 20
	sb := openRun(t, name, map[string]any{"output_limit": 64 << 20})
	resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"},
		// 32 MiB through fuse-overlayfs and a loaded engine can take more
		// than the default 10 s.
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
	}
	want := bytes.Repeat([]byte("0123456789abcde\n"), size/16)
	if !bytes.Equal(resp.Stdout, want) {
		t.Fatalf("stdout: %d bytes, not the %d expected bytes", len(resp.Stdout), size)
	}
	if resp.Truncated() {
		t.Error("truncated")
	}
}

func TestRunStreaming(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"output_limit": 10})
	var out, errb bytes.Buffer
	resp, err := sb.SpawnStreaming(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "cat; echo e >&2"}, Stdin: []byte("0123456789abc"),
	}, &out, &errb)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	if out.String() != "0123456789" || !resp.StdoutTruncated || resp.Stdout != nil {
		t.Errorf("stdout %q truncated %v resp.Stdout %q", out.String(), resp.StdoutTruncated, resp.Stdout)
	}
	if errb.String() != "e\n" || resp.StderrTruncated {
		t.Errorf("stderr %q", errb.String())
	}
}

// The command runs under the engine's init, not as PID 1: a signal it
// has no handler for acts as on a host. `init: false` runs it as PID 1,
// where `kill -9 $$` does nothing.
func TestRunHookIsNotPID1(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{TransportAPI, TransportCLI} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			sb := openRun(t, uniqueName(t), map[string]any{"transport": transport})
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
				Command: "/bin/sh", Args: []string{"-c", `echo $$; kill -9 $$; echo survived`},
			})
			var xe *sandbox.ExitError
			if !errors.As(err, &xe) || xe.Code != 137 {
				t.Fatalf("err = %v (stdout %q), want exit 137: killed by its own SIGKILL", err, resp.Stdout)
			}
			if got := strings.TrimSpace(string(resp.Stdout)); got == "1" || got == "" {
				t.Errorf("the command printed PID %q, want one that is not 1", got)
			}

			pid1 := openRun(t, uniqueName(t), map[string]any{"transport": transport, "init": false})
			resp, err = pid1.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
				Command: "/bin/sh", Args: []string{"-c", `echo $$; kill -9 $$; echo survived`},
			})
			if err != nil || string(resp.Stdout) != "1\nsurvived\n" {
				t.Errorf("init: false: err %v, stdout %q; want PID 1, surviving its own kill", err, resp.Stdout)
			}
		})
	}
}
