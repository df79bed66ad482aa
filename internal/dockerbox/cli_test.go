package dockerbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The CLI transport runs the same behaviour as the API transport; these
// tests prove it through the real docker binary.

var cliCfg = func(extra map[string]any) map[string]any {
	cfg := map[string]any{"transport": "cli"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func TestCLIRunStreamsEnvAndExitCodes(t *testing.T) {
	t.Setenv("PKS_CLI_FWD", "fwd")
	name := uniqueName(t)
	sb := openRun(t, name, cliCfg(map[string]any{"env": []any{"CFG=cfg", "PKS_CLI_FWD"}}))
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh",
		Args:    []string{"-c", `cat; echo "|$CFG|$PKS_CLI_FWD|$REQ|$HOME|$DOCKER_HOST" ; echo to-stderr >&2; exit 3`},
		Env:     []string{"REQ=req value", "HOME=/hook-home", "DOCKER_HOST=tcp://hook.invalid:1"},
		Stdin:   []byte("stdin"),
	})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 3 {
		t.Fatalf("err = %v, want exit 3 (stderr %q)", err, resp.Stderr)
	}
	if got, want := string(resp.Stdout), "stdin|cfg|fwd|req value|/hook-home|tcp://hook.invalid:1\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if string(resp.Stderr) != "to-stderr\n" {
		t.Errorf("stderr = %q", resp.Stderr)
	}
	// The hook's own 125, 126 and 127 are exit codes.
	for _, code := range []int{125, 126, 127} {
		_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "exit " + itoa(code)}})
		if !errors.As(err, &xe) || xe.Code != code {
			t.Errorf("exit %d: err = %v", code, err)
		}
	}
	// docker's own failure is a start error, its words kept out of the
	// hook's output.
	resp, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/hooks/nope"})
	if !errors.Is(err, sandbox.ErrStart) || errors.As(err, &xe) || !strings.Contains(err.Error(), "/hooks/nope") {
		t.Errorf("missing command: err = %v, want ErrStart naming it", err)
	}
	if resp.Stdout != nil || resp.Stderr != nil {
		t.Errorf("docker's words leaked: stdout %q stderr %q", resp.Stdout, resp.Stderr)
	}
	settle(sb)
	assertNoContainers(t, name)
}

func TestCLIRunLargeOutputCapAndStreaming(t *testing.T) {
	t.Parallel()
	const size = 32 << 20
	sb := openRun(t, uniqueName(t), cliCfg(map[string]any{"output_limit": size, "timeout": "60s"}))
	resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"}})
	if err != nil || !bytes.Equal(resp.Stdout, bytes.Repeat([]byte("0123456789abcde\n"), size/16)) || resp.Truncated() {
		t.Fatalf("32 MiB: err %v, %d bytes, truncated %v", err, len(resp.Stdout), resp.Truncated())
	}
	small := openRun(t, uniqueName(t), cliCfg(map[string]any{"output_limit": 10}))
	var out, errb bytes.Buffer
	resp, err = small.SpawnStreaming(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", "cat; echo 0123456789abc >&2"}, Stdin: []byte("0123456789abc"),
	}, &out, &errb)
	if err != nil || out.String() != "0123456789" || errb.String() != "0123456789" || !resp.StdoutTruncated || !resp.StderrTruncated {
		t.Fatalf("streaming: err %v stdout %q stderr %q resp %+v", err, out.String(), errb.String(), resp)
	}
}

func TestCLIRunExtraArgsAndMissingImage(t *testing.T) {
	t.Parallel()
	sb := openRun(t, uniqueName(t), cliCfg(map[string]any{"extra_args": []any{"--hostname", "pks-extra"}}))
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "hostname"})
	if err != nil || string(resp.Stdout) != "pks-extra\n" {
		t.Fatalf("extra_args: err %v stdout %q", err, resp.Stdout)
	}
	_, err = RunFactory(context.Background(), uniqueName(t), cliCfg(map[string]any{"image": "promptkit-sandbox-test/absent:0"}))
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "image promptkit-sandbox-test/absent:0 is not present locally") {
		t.Fatalf("missing image: err = %v", err)
	}
}

func TestCLIEngineUnreachable(t *testing.T) {
	dockertest.RequireCLI(t)
	const host = "unix:///nonexistent.sock"
	t.Setenv("DOCKER_HOST", host)
	for mode, open := range map[string]func() error{
		RunMode: func() error {
			_, err := RunFactory(context.Background(), "sb", cliCfg(map[string]any{"image": "busybox"}))
			return err
		},
		ExecMode: func() error {
			_, err := ExecFactory(context.Background(), "sb", cliCfg(map[string]any{"container": "c"}))
			return err
		},
	} {
		start := time.Now()
		err := open()
		if !errors.Is(err, sandbox.ErrTransport) || !strings.Contains(err.Error(), "docker engine at "+host+" is unreachable") {
			t.Errorf("%s: err = %v", mode, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s", mode, d)
		}
	}
}

func TestCLIExecBehaviour(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, cliCfg(map[string]any{"env": []any{"CFG=cfg"}, "extra_args": []any{"-e", "FROM_EXTRA=x"}}))
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
		Command: "/bin/sh", Args: []string{"-c", `cat; echo "|$CFG|$REQ|$FROM_EXTRA|$PATH"; echo e >&2; exit 126`},
		Env: []string{"REQ=r", "PATH=/bin"}, Stdin: []byte("in"),
	})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 126 || string(resp.Stdout) != "in|cfg|r|x|/bin\n" || string(resp.Stderr) != "e\n" {
		t.Fatalf("err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
	}
	_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "no-such-command"})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "no-such-command") {
		t.Errorf("not found: err = %v", err)
	}
	for i := range 5 {
		_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "sleep 331 & (sleep 332 &); setsid sleep 333 & wait"}, Timeout: 700 * time.Millisecond,
		})
		if !errors.Is(err, sandbox.ErrTimeout) {
			t.Fatalf("timeout %d: err = %v", i, err)
		}
		if left := leftovers(t, c); len(left) > 0 {
			t.Fatalf("timeout %d: processes left:\n%s", i, strings.Join(left, "\n"))
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	waitWarmExecs(t, c, 0)

	docker(t, "kill", c)
	_, err = ExecFactory(context.Background(), uniqueName(t), cliCfg(map[string]any{"container": c}))
	if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container "+c+" is not running (status exited)" {
		t.Errorf("stopped: err = %v", err)
	}
	_, err = ExecFactory(context.Background(), uniqueName(t), cliCfg(map[string]any{"container": "pks-test-no-such-container"}))
	if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container pks-test-no-such-container does not exist" {
		t.Errorf("missing: err = %v", err)
	}
}

func TestCLIExecContainerGoneAfterOpen(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	sb := openExec(t, c, cliCfg(map[string]any{"warm": 0}))
	docker(t, "rm", "-f", c)
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
	if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container "+c+" does not exist" {
		t.Fatalf("err = %v", err)
	}
	if resp.Stdout != nil || resp.Stderr != nil {
		t.Errorf("docker's words leaked: stdout %q stderr %q", resp.Stdout, resp.Stderr)
	}
}

func TestCLIExecCancelAndLargeStdout(t *testing.T) {
	t.Parallel()
	c := startContainer(t)
	const size = 32 << 20
	sb := openExec(t, c, cliCfg(map[string]any{"output_limit": size, "timeout": "60s"}))
	resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"}})
	if err != nil || !bytes.Equal(resp.Stdout, bytes.Repeat([]byte("0123456789abcde\n"), size/16)) || resp.Truncated() {
		t.Fatalf("32 MiB: err %v, %d bytes, truncated %v", err, len(resp.Stdout), resp.Truncated())
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	_, err = sb.Spawn(ctx, sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "sleep 341 & sleep 342"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: err = %v", err)
	}
	if left := leftovers(t, c); len(left) > 0 {
		t.Fatalf("processes left after cancel:\n%s", strings.Join(left, "\n"))
	}
}
