package direct

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

func open(t *testing.T, cfg map[string]any) sandbox.Sandbox {
	t.Helper()
	r := sandbox.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	sb, err := r.Open(context.Background(), "hooks", ModeName, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return sb
}

func sh(script string) sandbox.Request {
	return sandbox.Request{Command: "sh", Args: []string{"-c", script}}
}

func TestName(t *testing.T) {
	if got := open(t, nil).Name(); got != "hooks" {
		t.Errorf("Name = %q, want %q", got, "hooks")
	}
	if got := New("", shell.Options{}).Name(); got != ModeName {
		t.Errorf("Name = %q, want %q", got, ModeName)
	}
}

func TestRegisterTwiceFails(t *testing.T) {
	r := sandbox.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	if err := Register(r); !errors.Is(err, sandbox.ErrDuplicateMode) {
		t.Errorf("second Register = %v, want ErrDuplicateMode", err)
	}
}

func TestSpawnHookBinary(t *testing.T) {
	req := sandbox.Request{Command: hookBinary(t), Stdin: []byte(`{"hook":"tool"}`)}
	resp, err := open(t, nil).Spawn(context.Background(), req)
	if err != nil || string(resp.Stdout) != `{"allow":true}`+"\n" || len(resp.Stderr) != 0 {
		t.Errorf("Spawn = %q, %q, %v; want the verdict line", resp.Stdout, resp.Stderr, err)
	}
}

func TestSpawnTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     map[string]any
		reqTO   time.Duration
		wantMsg string
	}{
		{"from config string", map[string]any{"timeout": "300ms"}, 0, "timed out after 300ms"},
		{"from config milliseconds", map[string]any{"timeout": 250}, 0, "timed out after 250ms"},
		{"request wins", map[string]any{"timeout": "1m"}, 200 * time.Millisecond, "timed out after 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := sandbox.Request{Command: "sleep", Args: []string{"30"}, Timeout: tc.reqTO}
			start := time.Now()
			_, err := open(t, tc.cfg).Spawn(context.Background(), req)
			if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if sandbox.KindOf(err) != sandbox.KindTimeout || !strings.HasSuffix(err.Error(), tc.wantMsg) {
				t.Errorf("err = %q (kind %v), want KindTimeout ending %q", err, sandbox.KindOf(err), tc.wantMsg)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	sb := New("x", shell.Options{})
	if got := sb.opts.Timeout; got != 0 {
		t.Fatalf("New with zero Options set Timeout %v; shell applies the default", got)
	}
	opts, err := parseConfig(nil)
	if err != nil || opts != (shell.Options{}) {
		t.Errorf("parseConfig(nil) = %+v, %v; want zero Options (shell's 10s default)", opts, err)
	}
	if sandbox.DefaultTimeout != 10*time.Second {
		t.Errorf("sandbox.DefaultTimeout = %v, want 10s", sandbox.DefaultTimeout)
	}
}

func TestSpawnEnvInsideHook(t *testing.T) {
	t.Setenv("DIRECT_TEST_KEY", "sk-host")
	t.Setenv("DIRECT_TEST_HOST_ONLY", "leaks unless clean")
	req := sandbox.Request{Command: "env", Env: []string{"DIRECT_TEST_KEY", "LOG_LEVEL=info", "DIRECT_TEST_UNSET"}}

	resp, err := open(t, nil).Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSpace(string(resp.Stdout)), "\n")
	for _, want := range []string{"DIRECT_TEST_KEY=sk-host", "LOG_LEVEL=info", "DIRECT_TEST_HOST_ONLY=leaks unless clean"} {
		if !slices.Contains(env, want) {
			t.Errorf("hook env lacks %q", want)
		}
	}

	resp, err = open(t, map[string]any{"clean_env": true}).Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(resp.Stdout), "DIRECT_TEST_KEY=sk-host\nLOG_LEVEL=info\n"; got != want {
		t.Errorf("clean env = %q, want %q", got, want)
	}
}

func TestSpawnWorkdir(t *testing.T) {
	dir := t.TempDir()
	resp, err := open(t, map[string]any{"workdir": dir}).Spawn(context.Background(), sh(`pwd`))
	if err != nil || strings.TrimSpace(string(resp.Stdout)) != dir {
		t.Errorf("pwd = %q, %v; want %q", resp.Stdout, err, dir)
	}
}

func TestKillGraceFromConfig(t *testing.T) {
	// A hook that ignores SIGTERM is killed after kill_grace, not before.
	const grace = 400 * time.Millisecond
	sb := open(t, map[string]any{"timeout": "200ms", "kill_grace": "400ms"})
	start := time.Now()
	_, err := sb.Spawn(context.Background(), sh(`trap '' TERM; sleep 30`))
	elapsed := time.Since(start)
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if elapsed < 200*time.Millisecond+grace || elapsed > 200*time.Millisecond+grace+3*time.Second {
		t.Errorf("returned after %v, want about %v", elapsed, 200*time.Millisecond+grace)
	}
}
