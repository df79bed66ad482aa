package kubebox

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestStdinStdoutStderrExitCode(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, nil)
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "cat; echo to-stderr >&2; exit 42"}, Stdin: []byte("hello from stdin\n"),
		})
		var xe *sandbox.ExitError
		if !errors.As(err, &xe) || xe.Code != 42 {
			t.Fatalf("err = %v, want exit code 42", err)
		}
		if string(resp.Stdout) != "hello from stdin\n" || string(resp.Stderr) != "to-stderr\n" {
			t.Fatalf("stdout %q stderr %q (nothing of the wrapper's or kubectl's may show)", resp.Stdout, resp.Stderr)
		}
		// A bare name is looked up on the container's PATH; args pass verbatim.
		resp, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "echo", Args: []string{"a  b", "$HOME", "'c'"}})
		if err != nil || string(resp.Stdout) != "a  b $HOME 'c'\n" || len(resp.Stderr) != 0 {
			t.Fatalf("echo: err %v stdout %q stderr %q", err, resp.Stdout, resp.Stderr)
		}
		// It ran in the hooks container, not the pod's other one.
		resp, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "hostname"})
		if err != nil || strings.TrimSpace(string(resp.Stdout)) != c.hooks[:12] {
			t.Fatalf("hostname: %v %q, want %q", err, resp.Stdout, c.hooks[:12])
		}
		// A signal's death is an exit code like the shell's.
		_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "kill -9 $$"}})
		if !errors.As(err, &xe) || xe.Code != 137 {
			t.Fatalf("killed: err = %v, want exit code 137", err)
		}
	})
}

func TestEnvReachesRemoteProcess(t *testing.T) {
	c := startCluster(t)
	t.Setenv("PKS_TEST_FORWARDED", "forwarded value")
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, map[string]any{"env": []any{"CFG_VAR=from config", "PKS_TEST_FORWARDED", "PKS_TEST_UNSET"}})
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh",
			Args:    []string{"-c", `printf '%s|%s|%s|%s|%s' "$REQ_VAR" "$CFG_VAR" "$PKS_TEST_FORWARDED" "${PKS_TEST_UNSET-unset}" "$MULTI"`},
			Env:     []string{"REQ_VAR=req value", "MULTI=line1\nline2\\n", "CFG_VAR=overridden"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(resp.Stdout), "req value|overridden|forwarded value|unset|line1\nline2\\n"; got != want {
			t.Fatalf("stdout %q, want %q", got, want)
		}
		_, err = sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "true", Env: []string{"BAD-NAME=x"}})
		wantKind(t, err, sandbox.KindStart, "BAD-NAME", "shell identifier")
	})
}

func TestTimeoutsLeaveNoProcess(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, nil)
		for i := range 20 {
			start := time.Now()
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
				Command: "/bin/sh", Args: []string{"-c", "echo started; sleep 300 & sleep 301 & setsid sleep 302 & wait"},
				Timeout: 500 * time.Millisecond,
			})
			wantKind(t, err, sandbox.KindTimeout, "timed out after 500ms")
			if !errors.Is(err, sandbox.ErrTimeout) {
				t.Fatalf("call %d: not ErrTimeout: %v", i, err)
			}
			// The kill is a second exec: under a loaded engine it can
			// take seconds, never the 300 of the command.
			if d := time.Since(start); d > 15*time.Second {
				t.Fatalf("call %d: took %s", i, d)
			}
			if len(resp.Stdout) > 0 && string(resp.Stdout) != "started\n" {
				t.Errorf("stdout before the timeout = %q", resp.Stdout)
			}
			awaitNoLeftovers(t, c.hooks)
		}
	})
}

func TestCancelKillsRemoteProcess(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, nil)
		ctx := ctxTimeout(t, time.Minute)
		ctx, cancel := contextWithCancelAfter(ctx, 700*time.Millisecond)
		defer cancel()
		_, err := sb.Spawn(ctx, sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "sleep 300 & sleep 301"}})
		wantKind(t, err, sandbox.KindCanceled, "cancelled")
		awaitNoLeftovers(t, c.hooks)
	})
}

func TestLeftoverChildDoesNotHoldTheCall(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, nil)
		start := time.Now()
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "sleep 60 & echo hi"}, Timeout: 30 * time.Second,
		})
		if err != nil || string(resp.Stdout) != "hi\n" {
			t.Fatalf("err %v stdout %q", err, resp.Stdout)
		}
		// Held, the call would last the child's 60 s; free, it takes the
		// orphan grace and a kill exec, which with kubectl processes on a
		// machine busy with the whole suite took 5.2 s once.
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("took %s: the leftover child held the call", d)
		}
		awaitNoLeftovers(t, c.hooks)
	})
}

func TestConcurrentCalls(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sandboxtest.ConcurrentCalls(t, c.open(t, tr, nil), 16, time.Minute)
	})
}

func TestOutputLimitAndLargeOutput(t *testing.T) {
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, map[string]any{"output_limit": 1000})
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "head -c 5000 /dev/zero; head -c 3000 /dev/zero >&2"},
		})
		if err != nil || len(resp.Stdout) != 1000 || len(resp.Stderr) != 1000 || !resp.StdoutTruncated || !resp.StderrTruncated {
			t.Fatalf("err %v stdout %d (%v) stderr %d (%v)", err, len(resp.Stdout), resp.StdoutTruncated, len(resp.Stderr), resp.StderrTruncated)
		}
		big := c.open(t, tr, nil)
		const size = 8 << 20
		resp, err = big.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size)},
		})
		if err != nil || len(resp.Stdout) != size || strings.Trim(string(resp.Stdout), "x") != "" || resp.Truncated() {
			t.Fatalf("8 MiB: err %v, %d bytes", err, len(resp.Stdout))
		}
	})
}
