package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// cli runs the CLI in-process and returns its exit code and streams.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func examplesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// needPython skips example-hook tests only where python3 is truly absent
// and we are not in CI; CI installs it (make deps) and must run them.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		ci.Skip(t, "python3 is not installed, and the example hooks are Python (make deps installs it)")
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := cli(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "promptkit-sandbox dev (go") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"frobnicate"},
		{"hook"},
		{"hook", "run"},
		{"hook", "run", "--config", "x.yaml"},
		{"hook", "run", "--bogus"},
		{"validate"},
		{"spawn"},
		{"spawn", "--sandbox", "direct"},
		{"spawn", "--log-level", "loud", "--", "true"},
		{"spawn", "--timeout", "-1s", "--", "true"},
		{"exec"},
		{"exec", "--sandbox", "direct", "--", "true"},
		{"exec", "--config", "/nonexistent.yaml", "--", "true"},
		{"exec", "--config", "x.yaml"},
		{"serve"},
		{"serve", "--config", "/nonexistent.yaml"},
		{"serve", "--config", "x.yaml", "extra"},
	}
	for _, args := range cases {
		code, _, stderr := cli(t, "", args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with a message", args, code, stderr)
		}
	}
}

func TestValidateExample(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "runtime.yaml")
	code, out, stderr := cli(t, "", "validate", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"sandbox local: mode direct\n",
		"hook pii_filter: provider before_call,after_call filter, sandbox local, timeout 10s, command " + filepath.Join(examplesDir(t), "hooks", "pii_filter.py") + "\n",
		"hook eval_audit: eval (no phases) observe, sandbox direct, timeout 5s",
		cfg + ": ok (1 sandboxes, 4 hooks)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	body := `spec:
  sandboxes:
    box:
      mode: dockr_run
  hooks:
    a:
      command: /bin/true
      hook: provider
      phases: [before_execution]
    b:
      hook: tool
      phases: [before_execution]
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "", "validate", "--config", cfg)
	if code != exitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		cfg + ":4:",
		`unknown sandbox mode "dockr_run" (known modes: direct)`,
		cfg + ":9:",
		`phase "before_execution" is not a provider phase`,
		"spec.hooks.b",
		"command",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestHookRunExamples(t *testing.T) {
	needPython(t)
	ex := examplesDir(t)
	cfg := filepath.Join(ex, "runtime.yaml")
	cases := []struct {
		hook, phase, payload string
		code                 int
		out                  string
	}{
		{"pii_filter", "before_call", "provider_before_call_clean.json", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
		{"pii_filter", "before_call", "provider_before_call_ssn.json", 1, `{"allow":false,"reason":"US SSN found in message 0 (user)","enforced":false,"metadata":{"detector":"ssn","phase":"before_call"}}`},
		{"pii_filter", "after_call", "provider_after_call_ssn.json", 1, `{"allow":false,"reason":"US SSN found in response","enforced":false,"metadata":{"detector":"ssn","phase":"after_call"}}`},
		{"tool_allowlist", "before_execution", "tool_before_execution_allowed.json", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
		{"tool_allowlist", "before_execution", "tool_before_execution_denied.json", 1, `{"allow":false,"reason":"tool 'db_query' is not on the allowlist (lookup_order, search_docs)","enforced":false,"metadata":{"call_id":"call_9","tool":"db_query"}}`},
		{"audit_log", "session_start", "session_start.json", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
		{"eval_audit", "", "eval_result.json", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
	}
	for _, tc := range cases {
		t.Run(tc.hook+"/"+tc.payload, func(t *testing.T) {
			t.Parallel() // each run mostly waits for a Python interpreter to start
			args := []string{"hook", "run", "--config", cfg, "--hook", tc.hook, "--input", filepath.Join(ex, "payloads", tc.payload)}
			if tc.phase != "" {
				args = append(args, "--phase", tc.phase)
			}
			code, out, stderr := cli(t, "", args...)
			if code != tc.code || strings.TrimSpace(out) != tc.out {
				t.Fatalf("exit %d (want %d)\n got %s\nwant %s\nstderr: %s", code, tc.code, out, tc.out, stderr)
			}
		})
	}
}

func TestHookRunObserveWaitsForHook(t *testing.T) {
	needPython(t)
	ex := examplesDir(t)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv("AUDIT_LOG", logPath)
	code, _, stderr := cli(t, "", "hook", "run", "--config", filepath.Join(ex, "runtime.yaml"),
		"--hook", "audit_log", "--phase", "session_end", "--input", filepath.Join(ex, "payloads", "session_end.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(data), `"phase": "session_end"`) {
		t.Fatalf("audit log after hook run: %q, %v", data, err)
	}
}

func TestHookRunInputFromStdin(t *testing.T) {
	needPython(t)
	cfg := filepath.Join(examplesDir(t), "runtime.yaml")
	in := `{"request":{"Name":"search_docs","Args":null,"CallID":"c"}}`
	code, out, stderr := cli(t, in, "hook", "run", "--config", cfg, "--hook", "tool_allowlist", "--phase", "before_execution")
	if code != 0 || !strings.HasPrefix(out, `{"allow":true`) {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

func TestHookRunBadInput(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "runtime.yaml")
	cases := map[string]string{
		"not json":      `{"request": `,
		"wrong key":     `{"requets": {}}`,
		"missing field": `{}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := cli(t, in, "hook", "run", "--config", cfg, "--hook", "pii_filter", "--phase", "before_call")
			if code != exitUsage || out != "" || !strings.Contains(stderr, "hook run: input") {
				t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
			}
		})
	}
	code, _, stderr := cli(t, "", "hook", "run", "--config", cfg, "--hook", "nope", "--phase", "before_call")
	if code != exitUsage || !strings.Contains(stderr, `no hook named "nope"`) {
		t.Fatalf("unknown hook: %d %q", code, stderr)
	}
	code, _, stderr = cli(t, "", "hook", "run", "--config", cfg, "--hook", "pii_filter", "--phase", "before_call", "--input", "/nonexistent.json")
	if code != exitUsage || !strings.Contains(stderr, "/nonexistent.json does not exist") {
		t.Fatalf("missing input: %d %q", code, stderr)
	}
	code, _, stderr = cli(t, "", "hook", "run", "--config", cfg, "--hook", "pii_filter")
	if code != exitUsage || !strings.Contains(stderr, "--phase is required") {
		t.Fatalf("missing phase: %d %q", code, stderr)
	}
}

func TestSpawnDirect(t *testing.T) {
	code, out, stderr := cli(t, "hello from stdin", "spawn", "--sandbox", "direct", "--", "sh", "-c", "cat; echo; echo oops >&2; exit 7")
	if code != 7 || out != "hello from stdin\n" || stderr != "oops\n" {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
	code, _, stderr = cli(t, "", "spawn", "--timeout", "200ms", "--", "sleep", "30")
	if code != exitTimeout || !strings.Contains(stderr, "timed out after 200ms") {
		t.Fatalf("timeout: exit %d stderr %q", code, stderr)
	}
	code, _, stderr = cli(t, "", "spawn", "--", "/nonexistent/cmd")
	if code != exitSandbox || !strings.Contains(stderr, "/nonexistent/cmd") {
		t.Fatalf("not found: exit %d stderr %q", code, stderr)
	}
	t.Setenv("PKS_FORWARDED", "from-host")
	code, out, _ = cli(t, "", "spawn", "--env", "PKS_SET=verbatim", "--env", "PKS_FORWARDED", "--", "sh", "-c", `echo "$PKS_SET $PKS_FORWARDED"`)
	if code != 0 || out != "verbatim from-host\n" {
		t.Fatalf("env: exit %d out %q", code, out)
	}
	code, _, stderr = cli(t, "", "spawn", "--sandbox", "nope", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, `no sandbox named "nope"`) {
		t.Fatalf("unknown sandbox: exit %d stderr %q", code, stderr)
	}
}

func TestSpawnThroughConfiguredSandbox(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "runtime.yaml")
	code, out, stderr := cli(t, "", "spawn", "--config", cfg, "--sandbox", "local", "--", "echo", "hi")
	if code != 0 || out != "hi\n" {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

// TestBinaryExitCodes runs the real binary, so exit statuses and stdin
// plumbing are what a shell would see.
func TestBinaryExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the CLI binary (make test runs it)")
	}
	bin := filepath.Join(t.TempDir(), "promptkit-sandbox")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "spawn", "--", "sh", "-c", "read x; echo got:$x; exit 42")
	cmd.Stdin = strings.NewReader("ping\n")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 42 || string(out) != "got:ping\n" {
		t.Fatalf("spawn: %v %q", err, out)
	}
	cmd = exec.Command(bin, "validate", "--config", "/nonexistent.yaml")
	if err := cmd.Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Fatalf("validate missing file: %v", err)
	}
}
