package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExecSpawnServeTakeTheirDocumentedFlags runs spawn, exec (cold and
// served) and serve with every flag docs/cli.md shows for them, the
// flags every command takes included, and checks the exit codes its
// tables list.
func TestExecSpawnServeTakeTheirDocumentedFlags(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	pluginDir := shortTempDir(t)
	common := []string{"--log-level", "error", "--plugin-dir", pluginDir, "--plugin-start-timeout", "5s"}
	sock := filepath.Join(shortTempDir(t), "s.sock")
	// info: startServe waits for its "serving" line.
	srv := startServe(t, sock, nil, "--config", cfg, "--metrics-addr", "127.0.0.1:0",
		"--log-level", "info", "--plugin-dir", pluginDir, "--plugin-start-timeout", "5s")

	call := func(extra ...string) []string {
		return append(append(append([]string{"--config", cfg, "--sandbox", "host", "--timeout", "5s",
			"--env", "SET=v", "--env", "HOME", "--max-input", "1m"}, common...), extra...),
			"--", "sh", "-c", `cat; printf ':%s' "$SET"; exit 3`)
	}
	if code, out, stderr := cli(t, "in", append([]string{"spawn"}, call()...)...); code != 3 || out != "in:v" || stderr != "" {
		t.Errorf("spawn: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for name, socket := range map[string][]string{"cold": nil, "served": {"--socket", sock}} {
		if r := runExec(t, isolated(t), []byte("in"), call(socket...)...); r.code != 3 || r.stdout != "in:v" || r.stderr != "" {
			t.Errorf("exec %s: %+v", name, r)
		}
	}

	// The codes of the tables: 124, 125, 2 (130 and 0 for serve are
	// TestExecKilledLeavesNothing's and TestServeSocket's).
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"timed out", []string{"--sandbox", "host", "--timeout", "100ms", "--", "sleep", "5"}, exitTimeout, "timed out after 100ms"},
		{"could not run", []string{"--sandbox", "host", "--", "/no/such/hook"}, exitSandbox, "/no/such/hook"},
		{"no such sandbox", []string{"--sandbox", "nope", "--", "true"}, exitUsage, `no sandbox named "nope"`},
		{"input too large", []string{"--sandbox", "host", "--max-input", "1k", "--", "cat"}, exitUsage, "stdin is larger than 1 KiB"},
		{"bad flag", []string{"--sandbox", "host", "--bogus", "--", "true"}, exitUsage, "flag provided but not defined: -bogus"},
	} {
		stdin := strings.Repeat("x", 2048)
		if code, _, stderr := cli(t, stdin, append([]string{"spawn", "--config", cfg}, tc.args...)...); code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("spawn, %s: exit %d, stderr %q; want %d and %q", tc.name, code, stderr, tc.code, tc.msg)
		}
		for name, socket := range map[string][]string{"cold": nil, "served": {"--socket", sock}} {
			args := append(append([]string{"--config", cfg}, socket...), tc.args...)
			if r := runExec(t, isolated(t), []byte(stdin), args...); r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("exec %s, %s: %+v; want %d and %q", name, tc.name, r, tc.code, tc.msg)
			}
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, srv.stderr)
	}
}
