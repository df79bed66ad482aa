package shells

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/guard"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

func bash(t *testing.T, m *Manager, c Command) string {
	t.Helper()
	out, err := m.Bash(context.Background(), c)
	if err != nil {
		t.Fatalf("Bash(%q): %v", c.Command, err)
	}
	return out
}

func TestForegroundResult(t *testing.T) {
	m := newManager(t, Options{})
	for _, tc := range []struct{ command, want string }{
		{"echo ok", "ok\n"},
		{"true", ""},
		{"echo out; echo err >&2; exit 2", "out\n--- stderr ---\nerr\nExit code: 2"},
		{"echo err >&2", "--- stderr ---\nerr\n"},
		{"printf x; exit 1", "x\nExit code: 1"},
		{"kill -9 $$", "Exit code: 137 (killed by signal: killed)"},
		{"cat; echo eof", "eof\n"}, // stdin is empty, not inherited
		{"pwd", "DIR\n"},
	} {
		want := strings.ReplaceAll(tc.want, "DIR", m.opts.Dir)
		if got := bash(t, m, Command{Command: tc.command}); got != want {
			t.Errorf("%q: got %q, want %q", tc.command, got, want)
		}
	}
}

// TestForegroundTimeoutKillsTheGroup waits out a 3 s timeout, or under
// -short 1 s: time enough for the command to write its PIDs first.
func TestForegroundTimeoutKillsTheGroup(t *testing.T) {
	timeout := 3 * time.Second
	if testing.Short() {
		timeout = time.Second
	}
	m := newManager(t, Options{})
	pids := inDir(m, "pids")
	// A subshell with a child of its own, and the shell itself.
	cmd := `(sleep 60 & echo $! >> pids; sleep 60) & echo $! >> pids; echo $$ >> pids; echo started; sleep 60`
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		out, err := m.Bash(context.Background(), Command{Command: cmd, Timeout: timeout})
		done <- result{out, err}
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, pids, 3)...)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "started\nCommand timed out after " + timeout.String(); r.out != want {
		t.Errorf("got %q, want %q", r.out, want)
	}
	if el := time.Since(began); el > timeout+3*time.Second {
		t.Errorf("took %s for a %s timeout", el, timeout)
	}
	proctest.AssertGone(t, ids...)
}

func TestForegroundBackgroundChildIsKilledAndDoesNotDelay(t *testing.T) {
	m := newManager(t, Options{})
	began := time.Now()
	out := bash(t, m, Command{Command: `sleep 60 & echo $! > pid; echo hi`})
	if el := time.Since(began); el > time.Second {
		t.Errorf("took %s", el)
	}
	if out != "hi\n" {
		t.Errorf("got %q", out)
	}
	proctest.AssertCommGone(t, proctest.ReadPIDs(t, inDir(m, "pid"), 1)[0], "sleep")
}

func TestForegroundCallerCancelKillsTheGroup(t *testing.T) {
	m := newManager(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Bash(ctx, Command{Command: `sleep 60 & echo $! >> pids; echo $$ >> pids; sleep 60`})
		done <- err
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pids"), 2)...)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want a cancellation", err)
	}
	proctest.AssertGone(t, ids...)
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestForegroundOutputKeepsHeadAndTail(t *testing.T) {
	m := newManager(t, Options{MaxOutput: 1000})
	full := seq(100000)
	if !strings.HasSuffix(full[:500], "\n") {
		t.Fatal("test assumes the head ends a line")
	}
	want := full[:500] + fmt.Sprintf("[... %d bytes elided ...]\n", len(full)-1000) + full[len(full)-500:]
	if got := bash(t, m, Command{Command: "seq 1 100000"}); got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	// A short stderr keeps all of its bytes; stdout gets the rest.
	want = full[:497] + fmt.Sprintf("\n[... %d bytes elided ...]\n", len(full)-995) + full[len(full)-498:] +
		"--- stderr ---\noops\n"
	if got := bash(t, m, Command{Command: "seq 1 100000; echo oops >&2"}); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRefusedCommand(t *testing.T) {
	m := newManager(t, Options{})
	_, err := m.Bash(context.Background(), Command{Command: "sudo id"})
	var r *guard.Refusal
	if !errors.As(err, &r) || r.Name != "sudo" || !strings.Contains(err.Error(), "privilege escalation") {
		t.Errorf("got %v, want a refusal of sudo", err)
	}
	if got := bash(t, m, Command{Command: "echo mount"}); got != "mount\n" {
		t.Errorf("echo mount: got %q", got)
	}
}

func TestEnvironmentIsExactlyOptionsEnv(t *testing.T) {
	t.Setenv("SHELLS_TEST_LEAK", "leaked")
	m := newManager(t, Options{Env: []string{"PATH=/usr/bin:/bin", "FOO=bar baz", "SHELLS_TEST_LEAK"}})
	var got []string
	for line := range strings.Lines(bash(t, m, Command{Command: "env"})) {
		line = strings.TrimSuffix(line, "\n")
		// bash sets these itself.
		if !strings.HasPrefix(line, "PWD=") && !strings.HasPrefix(line, "SHLVL=") && !strings.HasPrefix(line, "_=") {
			got = append(got, line)
		}
	}
	slices.Sort(got)
	if want := []string{"FOO=bar baz", "PATH=/usr/bin:/bin"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestForegroundOutputIsScrubbed(t *testing.T) {
	m := newManager(t, Options{Scrubber: scrub.New(map[string]string{"X": "s3cr3t-value-123"})})
	got := bash(t, m, Command{Command: "echo s3cr3t-value-123; printf 'v=s3cr3t-'; sleep 0.1; printf 'value-123' >&2"})
	if want := "[REDACTED:secret:X]\nv=s3cr3t-\n--- stderr ---\nvalue-123"; got != want {
		// The halves went to different streams: neither is the secret.
		t.Errorf("got %q, want %q", got, want)
	}
	got = bash(t, m, Command{Command: "printf 'v=s3cr3t-'; sleep 0.1; printf 'value-123 end'"})
	if want := "v=[REDACTED:secret:X] end"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBadArguments(t *testing.T) {
	m := newManager(t, Options{MaxTimeout: 10 * time.Minute})
	for _, tc := range []struct {
		c    Command
		want string
	}{
		{Command{Command: "  "}, "bash: empty command"},
		{Command{Command: "true", Timeout: 11 * time.Minute}, "bash: timeout 11m0s exceeds the maximum of 10m0s"},
		{Command{Command: "true", Timeout: -time.Second}, "bash: timeout must not be negative (got -1s)"},
		{Command{Command: "echo 'unclosed"}, "the command does not parse as bash"},
	} {
		_, err := m.Bash(context.Background(), tc.c)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
}

func TestStartFailureIsAnError(t *testing.T) {
	m := New(Options{Dir: "/nonexistent/workspace"})
	defer m.Close()
	for _, bg := range []bool{false, true} {
		_, err := m.Bash(context.Background(), Command{Command: "true", Background: bg})
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/workspace") {
			t.Errorf("background=%v: got %v", bg, err)
		}
	}
}
