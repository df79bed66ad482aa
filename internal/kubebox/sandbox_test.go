package kubebox

import (
	"errors"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestStdinStdoutStderrExitCode(t *testing.T) {
	t.Parallel()
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
		// It ran in the hooks pod.
		if got := hostname(t, sb); got != testPod {
			t.Fatalf("hostname %q, want %q", got, testPod)
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
