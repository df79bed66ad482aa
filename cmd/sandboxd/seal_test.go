package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/seal"
)

// TestSecretsLeaveTheProcess: the token (given in the environment or a
// file) and every --secret-env value are gone from sandboxd's
// /proc/PID/environ and cmdline, where a Bash call (or any process) could
// read them; they still work, and shells still lack them.
func TestSecretsLeaveTheProcess(t *testing.T) {
	const secret = "s3cr3t-value-0123456789abcdef"
	tokenFile := filepath.Join(t.TempDir(), "token")
	const fileToken = "file-token-0123456789abcdef0123456789"
	if err := os.WriteFile(tokenFile, []byte(fileToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env   []string
		args  []string
		token string
	}{
		"token in the environment": {env: []string{"SANDBOXD_TOKEN=env-token-0123456789abcdef0123456789", "MY_SECRET=" + secret},
			args: []string{"--secret-env", "MY_SECRET"}, token: "env-token-0123456789abcdef0123456789"},
		"token file": {env: []string{"MY_SECRET=" + secret, "SANDBOXD_SECRET_ENV=MY_SECRET"},
			args: []string{"--token-file", tokenFile}, token: fileToken},
		"token flag": {env: []string{"MY_SECRET=" + secret},
			args: []string{"--secret-env=MY_SECRET", "-token", "flag-token-0123456789abcdef0123456789"}, token: "flag-token-0123456789abcdef0123456789"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := startHTTPEnv(t, tc.env, append([]string{"--workspace", dir}, tc.args...)...)
			s.token = tc.token
			pid := strconv.Itoa(s.cmd.Process.Pid)
			for _, file := range []string{"environ", "cmdline"} {
				b, err := os.ReadFile("/proc/" + pid + "/" + file)
				if err != nil {
					t.Fatal(err)
				}
				for _, leak := range []string{secret, tc.token, tokenFile} {
					if strings.Contains(string(b), leak) {
						t.Errorf("/proc/%s/%s holds %q", pid, file, leak)
					}
				}
			}
			cs := s.connect(t) // the token still works
			got := callTool(t, cs, "Bash", map[string]any{"command": "cat /proc/" + pid + "/environ /proc/" + pid + "/cmdline | tr '\\0' ' '"})
			for _, leak := range []string{secret, "MY_SECRET=", tc.token, "SANDBOXD_TOKEN="} {
				if strings.Contains(got, leak) {
					t.Errorf("a Bash call reads %q in sandboxd's /proc files:\n%s", leak, got)
				}
			}
			// (The descriptor's number stays in the kernel's copy of the
			// environment; it tells nothing, and is read and closed.)
			env := callTool(t, cs, "Bash", map[string]any{"command": "env; ls /proc/self/fd"})
			for _, leak := range []string{secret, "MY_SECRET=", tc.token, "SANDBOXD_TOKEN", seal.EnvSealed} {
				if strings.Contains(env, leak) {
					t.Errorf("a shell's environment holds %q:\n%s", leak, env)
				}
			}
			// The secret is still scrubbed from output.
			if got := callTool(t, cs, "Bash", map[string]any{"command": "echo " + secret}); strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED:secret:MY_SECRET]") {
				t.Errorf("the secret is no longer scrubbed: %q", got)
			}
		})
	}
}
