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

func openExec(t *testing.T, container string, cfg map[string]any) *ExecSandbox {
	t.Helper()
	cfg["container"] = container
	if _, set := cfg["resident"]; !set && strings.HasSuffix(t.Name(), "/"+pathExec) {
		cfg["resident"] = false
	}
	sb, err := ExecFactory(context.Background(), uniqueName(t), cfg)
	if err != nil {
		t.Fatalf("ExecFactory: %v", err)
	}
	t.Cleanup(func() { sb.(*ExecSandbox).Close() })
	return sb.(*ExecSandbox)
}

// The two ways transport api runs a call: through the resident, and as
// an exec session of its own (resident: false, or when none can run).
const (
	pathResident = "resident"
	pathExec     = "exec"
)

// eachExecPath runs test, in parallel, once for each way: openExec in a
// subtest named pathExec turns the resident off.
func eachExecPath(t *testing.T, test func(t *testing.T)) {
	for _, name := range []string{pathResident, pathExec} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t)
		})
	}
}

// eachExecPathSerial is eachExecPath for a test that sets environment
// variables: one way after the other.
func eachExecPathSerial(t *testing.T, test func(t *testing.T)) {
	for _, name := range []string{pathResident, pathExec} {
		t.Run(name, test)
	}
}

func TestExecStdinStdoutStderrExitCode(t *testing.T) {
	t.Parallel()
	eachExecPath(t, func(t *testing.T) {
		c := startContainer(t)
		sb := openExec(t, c, map[string]any{})
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh",
			Args:    []string{"-c", "cat; echo to-stderr >&2; exit 42"},
			Stdin:   []byte("hello from stdin\n"),
		})
		var xe *sandbox.ExitError
		if !errors.As(err, &xe) || xe.Code != 42 {
			t.Fatalf("err = %v, want exit code 42", err)
		}
		if got := string(resp.Stdout); got != "hello from stdin\n" {
			t.Errorf("stdout = %q", got)
		}
		if got := string(resp.Stderr); got != "to-stderr\n" {
			t.Errorf("stderr = %q (the wrapper's line must not show)", got)
		}

		// A bare name is looked up on the container's PATH; args pass verbatim.
		resp, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "echo", Args: []string{"a  b", "$HOME", "'c'"}})
		if err != nil || string(resp.Stdout) != "a  b $HOME 'c'\n" || resp.Stderr != nil {
			t.Fatalf("echo: err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
		}
	})
}

func TestExecEnvUserWorkdir(t *testing.T) {
	eachExecPathSerial(t, func(t *testing.T) {
		t.Setenv("PKS_TEST_FORWARDED", "fwd")
		c := startContainer(t)
		sb := openExec(t, c, map[string]any{"env": []any{"CFG_VAR=cfg", "PKS_TEST_FORWARDED"}, "user": "1234:5678", "workdir": "/bin"})
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh",
			Args:    []string{"-c", `echo "$REQ_VAR|$CFG_VAR|$PKS_TEST_FORWARDED|$(id -u):$(id -g)|$(pwd)"`},
			Env:     []string{"REQ_VAR=req value"},
		})
		if err != nil {
			t.Fatalf("Spawn: %v (stdout %q, stderr %q)", err, resp.Stdout, resp.Stderr)
		}
		if got, want := string(resp.Stdout), "req value|cfg|fwd|1234:5678|/bin\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		if got, want := sb.ForwardedEnv(), []string{"CFG_VAR=cfg", "PKS_TEST_FORWARDED=fwd"}; !slices.Equal(got, want) {
			t.Errorf("ForwardedEnv = %q, want %q", got, want)
		}

		// A workdir the container lacks: caught when the sandbox opens, and
		// when it goes missing later the engine's words are a start error,
		// never the hook's output. (A resident is already in its workdir.)
		_, err = ExecFactory(context.Background(), uniqueName(t), map[string]any{"container": c, "workdir": "/nowhere"})
		if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "/nowhere") {
			t.Fatalf("ExecFactory err = %v", err)
		}
		if sb.res != nil && sb.res.Err() == nil {
			return
		}
		docker(t, "exec", c, "mkdir", "/tmp/gone")
		gone := openExec(t, c, map[string]any{"workdir": "/tmp/gone", "resident": false, "warm": 0})
		docker(t, "exec", c, "rmdir", "/tmp/gone")
		resp, err = gone.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "/tmp/gone") || resp.Stdout != nil || resp.Stderr != nil {
			t.Fatalf("Spawn err = %v, stdout %q, stderr %q", err, resp.Stdout, resp.Stderr)
		}
	})
}

// leftovers lists the processes in the container other than its init,
// the main sleep, the ps itself and warm execs (wrappers waiting for a
// call: they have run nothing).
func leftovers(t *testing.T, c string) []string {
	return processesIn(t, c, false)
}

// processesIn is leftovers, counting warm execs too when withWarm.
func processesIn(t *testing.T, c string, withWarm bool) []string {
	t.Helper()
	var left []string
	for _, line := range strings.Split(psIn(t, c), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		args := strings.Join(f[2:], " ")
		if f[0] == "1" || args == "sleep 3600" || strings.HasPrefix(args, "ps ") {
			continue
		}
		if !withWarm && strings.HasSuffix(args, " pks-wrapper") {
			continue
		}
		if strings.HasPrefix(args, residentDir+"/resident-") {
			continue
		}
		if strings.HasSuffix(args, "runc init") {
			// An exec the engine is starting (a warm exec being
			// replenished): runc's own, not a call's.
			continue
		}
		left = append(left, line)
	}
	return left
}

func TestExecMissingContainer(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	_, err := ExecFactory(context.Background(), uniqueName(t), map[string]any{"container": "pks-test-no-such-container"})
	if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container pks-test-no-such-container does not exist" {
		t.Fatalf("err = %v, want ErrStart: container ... does not exist", err)
	}

	// Removed after the sandbox opened.
	c := startContainer(t)
	sb := openExec(t, c, map[string]any{})
	docker(t, "rm", "-f", c)
	_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
	if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container "+c+" does not exist" {
		t.Fatalf("Spawn err = %v", err)
	}
}

func TestExecStoppedContainer(t *testing.T) {
	t.Parallel()
	eachExecPath(t, func(t *testing.T) {
		c := startContainer(t)
		sb := openExec(t, c, map[string]any{})
		docker(t, "kill", c)
		_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true"})
		if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container "+c+" is not running (status exited)" {
			t.Fatalf("Spawn err = %v", err)
		}
		_, err = ExecFactory(context.Background(), uniqueName(t), map[string]any{"container": c})
		if !errors.Is(err, sandbox.ErrStart) || err.Error() != "container "+c+" is not running (status exited)" {
			t.Fatalf("ExecFactory err = %v", err)
		}
	})
}

func TestExecNeedsShell(t *testing.T) {
	t.Parallel()
	img := busyboxImage(t)
	// A container without /bin/sh: busybox lives elsewhere.
	id := docker(t, "create", "--network", "none", "--entrypoint", "/bin/busybox", img, "sleep", "3600")
	t.Cleanup(func() { docker(t, "rm", "-f", id) })
	docker(t, "start", id)
	docker(t, "exec", id, "/bin/busybox", "rm", "/bin/sh")
	_, err := ExecFactory(context.Background(), uniqueName(t), map[string]any{"container": id})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "needs /bin/sh") {
		t.Fatalf("err = %v, want ErrStart saying /bin/sh is needed", err)
	}
}

func TestExecLargeStdoutAndCap(t *testing.T) {
	t.Parallel()
	eachExecPath(t, func(t *testing.T) {
		c := startContainer(t)
		sb := openExec(t, c, map[string]any{"output_limit": 64 << 20})
		resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{
			// 32 MiB under -race on a busy engine has taken more than the
			// default 10 s: the test is about the bytes, not the pace.
			Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"}, Timeout: 2 * time.Minute,
		})
		if err != nil {
			t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
		}
		if want := bytes.Repeat([]byte("0123456789abcde\n"), (32<<20)/16); !bytes.Equal(resp.Stdout, want) {
			t.Fatalf("stdout: %d bytes, not the expected %d", len(resp.Stdout), len(want))
		}

		small := openExec(t, c, map[string]any{"output_limit": 100})
		resp, err = small.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "yes | head -c 100000 >&2; echo out"},
		})
		if err != nil {
			t.Fatalf("Spawn: %v", err)
		}
		if len(resp.Stderr) != 100 || !resp.StderrTruncated || string(resp.Stdout) != "out\n" || resp.StdoutTruncated {
			t.Errorf("stderr %d bytes (truncated %v), stdout %q", len(resp.Stderr), resp.StderrTruncated, resp.Stdout)
		}
	})
}

func TestExecStreaming(t *testing.T) {
	t.Parallel()
	eachExecPath(t, func(t *testing.T) {
		c := startContainer(t)
		sb := openExec(t, c, map[string]any{})
		var out, errb bytes.Buffer
		resp, err := sb.SpawnStreaming(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "cat; echo e >&2"}, Stdin: []byte("in"),
		}, &out, &errb)
		if err != nil || out.String() != "in" || errb.String() != "e\n" || resp.Truncated() {
			t.Fatalf("err %v stdout %q stderr %q", err, out.String(), errb.String())
		}
	})
}
