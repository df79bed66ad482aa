package sandboxtest_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// brokenEnv names, in the child process, the broken sandbox to test.
const brokenEnv = "SANDBOXTEST_BROKEN"

// broken are sandboxes that each break one promise of the contract, and
// the case of the suite that must catch it.
var broken = map[string]struct {
	catches string // the case that fails
	says    string // in its failure
	wrap    func(sb sandbox.Sandbox) sandbox.Sandbox
}{
	"escaping child": {sandboxtest.CaseTimeoutTree, "the call left behind", func(sb sandbox.Sandbox) sandbox.Sandbox {
		// direct contains a session of its own too, unless kept to the
		// process group. (This runs in the child process, which tests
		// this one sandbox.)
		_ = os.Setenv(shell.ContainmentEnv, string(shell.ContainGroup))
		return spawnFunc(func(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
			// Every process in a session of its own: a process-group kill
			// misses it. Its output goes nowhere, so the call can end.
			req.Args = append([]string{"-c", `exec 3<&0; setsid "$@" <&3 >/dev/null 2>&1 & wait`, "sh", req.Command}, req.Args...)
			req.Command = "/bin/sh"
			return sb.Spawn(ctx, req)
		})
	}},
	"diagnostics in stderr": {sandboxtest.CaseDiagnostics, `"backend: command terminated\n"`, func(sb sandbox.Sandbox) sandbox.Sandbox {
		return spawnFunc(func(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
			resp, err := sb.Spawn(ctx, req)
			if err != nil {
				resp.Stderr = append(resp.Stderr, "backend: command terminated\n"...)
			}
			return resp, err
		})
	}},
	"untyped errors": {sandboxtest.CaseTypedErrors, "errors.Is(err, sandbox.ErrTimeout) = false, want true", func(sb sandbox.Sandbox) sandbox.Sandbox {
		return spawnFunc(func(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
			resp, err := sb.Spawn(ctx, req)
			if err != nil && !errors.Is(err, sandbox.ErrStart) {
				err = errors.New(err.Error())
				resp.Err = err
			}
			return resp, err
		})
	}},
	"own 127 taken for a start error": {sandboxtest.CaseExitCodes, "errors.As(err, *sandbox.ExitError) = false, want true", func(sb sandbox.Sandbox) sandbox.Sandbox {
		return spawnFunc(func(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
			resp, err := sb.Spawn(ctx, req)
			var xe *sandbox.ExitError
			if errors.As(err, &xe) && xe.Code == 127 {
				err = sandbox.NewError(sandbox.KindStart, "command not found", nil)
				resp.Err = err
			}
			return resp, err
		})
	}},
	"env dropped": {sandboxtest.CaseEnv, `stdout = "|forwarded-one|unset"`, func(sb sandbox.Sandbox) sandbox.Sandbox {
		return spawnFunc(func(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
			req.Env = nil
			return sb.Spawn(ctx, req)
		})
	}},
	"cap one byte short": {sandboxtest.CaseOutputCap, "stdout: 524304 bytes", nil}, // opened with output_limit - 1
	"spawn after close": {sandboxtest.CaseClose, "Spawn after Close: want a start or transport error", func(sb sandbox.Sandbox) sandbox.Sandbox {
		return &closer{Sandbox: sb}
	}},
}

type spawnFunc func(ctx context.Context, req sandbox.Request) (sandbox.Response, error)

func (f spawnFunc) Name() string { return "broken" }
func (f spawnFunc) Close() error { return nil }
func (f spawnFunc) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return f(ctx, req)
}

// closer closes, but goes on serving calls.
type closer struct {
	sandbox.Sandbox
	closed atomic.Bool
}

func (c *closer) Close() error { c.closed.Store(true); return nil }

// TestSuiteCatchesBrokenSandboxes runs the suite, in a child process,
// against each broken sandbox, and checks that the case meant to catch
// it fails.
func TestSuiteCatchesBrokenSandboxes(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("the child process")
	}
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenChild$/^broken$/^"+b.catches+"$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestBrokenChild/broken/"+b.catches) || !strings.Contains(string(out), b.says) {
				t.Errorf("the suite did not catch %q in case %s saying %q (err %v):\n%s", name, b.catches, b.says, err, out)
			}
		})
	}
}

// TestBrokenChild is the child process of TestSuiteCatchesBrokenSandboxes.
func TestBrokenChild(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("run by TestSuiteCatchesBrokenSandboxes")
	}
	b := broken[name]
	sandboxtest.Conformance(t, sandboxtest.Cell{
		Name: "broken",
		Open: func(t *testing.T, cfg map[string]any) sandbox.Sandbox {
			cfg = maps.Clone(cfg)
			if b.wrap == nil {
				cfg["output_limit"] = sandboxtest.OutputLimit - 1
			}
			sb, err := direct.Factory(context.Background(), "broken", cfg)
			if err != nil {
				t.Fatal(err)
			}
			if b.wrap == nil {
				return spawnFunc(sb.Spawn)
			}
			return b.wrap(sb)
		},
		Options: sandboxtest.Options{KillTimeout: 500 * time.Millisecond, Slack: 3 * time.Second},
	})
}
