package dockerbox

import (
	"bytes"
	"context"
	"errors"
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
	sb, err := RunFactory(name, cfg)
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

func TestRunTimeoutRemovesContainer(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"timeout": "800ms"})
	for i := range 20 {
		start := time.Now()
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh",
			Args:    []string{"-c", "echo started; sleep 300 & sleep 301"},
		})
		elapsed := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sandbox.ErrTimeout) {
			t.Fatalf("call %d: err = %v, want a timeout", i, err)
		}
		if !strings.Contains(err.Error(), "timed out after 800ms") {
			t.Errorf("err = %q, want it to say timed out after 800ms", err)
		}
		// Under load the container may not have got as far as the echo
		// within the timeout; what it printed is returned either way.
		if s := string(resp.Stdout); s != "started\n" && s != "" {
			t.Errorf("stdout = %q, want the output before the timeout", resp.Stdout)
		}
		// Killing and removing is the engine's work: under the load of
		// the whole test suite it can take seconds. This only catches a
		// call that hangs.
		if elapsed > 20*time.Second {
			t.Errorf("call took %s", elapsed)
		}
		assertNoContainers(t, name)
	}
}

func TestRunTimeoutKeepsOutput(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "echo started; echo err >&2; sleep 60"}, Timeout: 3 * time.Second,
	})
	if !errors.Is(err, sandbox.ErrTimeout) || string(resp.Stdout) != "started\n" || string(resp.Stderr) != "err\n" {
		t.Fatalf("err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
	}
	assertNoContainers(t, name)
}

func TestRunRequestTimeoutWins(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"timeout": "1m"})
	_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "sleep", Args: []string{"60"}, Timeout: 500 * time.Millisecond})
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.Contains(err.Error(), "timed out after 500ms") {
		t.Fatalf("err = %v, want timed out after 500ms", err)
	}
	assertNoContainers(t, name)
}

func TestRunCancelRemovesContainer(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	_, err := sb.Spawn(ctx, sandbox.Request{Command: "sleep", Args: []string{"60"}})
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sandbox.KindOf(err) != sandbox.KindCanceled {
		t.Errorf("kind = %v", sandbox.KindOf(err))
	}
	assertNoContainers(t, name)
}

func TestRunMissingImage(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	const img = "promptkit-sandbox-test/does-not-exist:1.0"
	_, err := RunFactory(uniqueName(t), map[string]any{"image": img})
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

func TestRunCommandNotFoundIsStartError(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{})
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/hooks/nope"})
	var xe *sandbox.ExitError
	if !errors.Is(err, sandbox.ErrStart) || errors.As(err, &xe) {
		t.Fatalf("err = %v, want ErrStart", err)
	}
	if resp.Stdout != nil || resp.Stderr != nil {
		t.Errorf("the engine's words leaked into the output: stdout %q stderr %q", resp.Stdout, resp.Stderr)
	}
	if !strings.Contains(err.Error(), "/hooks/nope") {
		t.Errorf("err = %q, want the engine's words naming the command", err)
	}
	assertNoContainers(t, name)

	// The hook's own 127 is an exit code, not a start failure.
	_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "exit 127"}})
	if !errors.As(err, &xe) || xe.Code != 127 {
		t.Fatalf("err = %v, want exit code 127", err)
	}
}

func TestRunLargeStdoutIntact(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	const size = 32 << 20
	sb := openRun(t, name, map[string]any{"output_limit": 64 << 20})
	resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"},
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

func TestRunOutputCap(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"output_limit": 1000})
	if sb.OutputLimit() != 1000 {
		t.Fatalf("OutputLimit = %d", sb.OutputLimit())
	}
	// A minute, not the default 10s: the whole suite loads the engine.
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "yes | head -c 5000000; echo small >&2"}, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	if len(resp.Stdout) != 1000 || !resp.StdoutTruncated || string(resp.Stdout[:4]) != "y\ny\n" {
		t.Errorf("stdout: %d bytes, truncated %v", len(resp.Stdout), resp.StdoutTruncated)
	}
	if string(resp.Stderr) != "small\n" || resp.StderrTruncated {
		t.Errorf("stderr = %q, truncated %v", resp.Stderr, resp.StderrTruncated)
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
