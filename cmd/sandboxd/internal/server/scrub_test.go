package server

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/scrubtest"
)

const registered = "hunter2-registered-value"

// TestResultsAreScrubbed reads and greps a file full of credentials, and
// checks that none comes back and each redaction names its kind.
func TestResultsAreScrubbed(t *testing.T) {
	d := startDaemon(t, Config{Secrets: map[string]string{"MY_SECRET": registered}})
	cs := d.connect(t, streamable)
	// The credentials go last: the truncated private key that ends them
	// is redacted to the end of the text.
	lines := []string{
		"start",
		"plain " + registered,
		"b64 " + base64.StdEncoding.EncodeToString([]byte(registered)),
		"url " + url.QueryEscape(registered+"/&"),
		"the daemon's own token " + testToken,
	}
	for _, c := range scrubtest.Credentials {
		lines = append(lines, c.Line())
	}
	os.WriteFile(filepath.Join(d.dir, "creds.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	outputs := map[string]string{
		"Read": ok(t, cs, "Read", map[string]any{"file_path": "creds.txt"}),
		// A line holding a secret never matches (see grep_oracle_test.go),
		// but it is shown, scrubbed, as context of one that does.
		"Grep": ok(t, cs, "Grep", map[string]any{"pattern": "^start$", "output_mode": "content", "-A": 1000}),
		"Bash": ok(t, cs, "Bash", map[string]any{"command": "cat creds.txt"}),
	}
	for tool, out := range outputs {
		for _, c := range scrubtest.Credentials {
			if strings.Contains(out, c.Secret) {
				t.Errorf("%s: %s came back in the clear", tool, c.Kind)
			}
			if !strings.Contains(out, "[REDACTED:"+c.Kind+"]") {
				t.Errorf("%s: no [REDACTED:%s]", tool, c.Kind)
			}
		}
		for _, leak := range []string{registered, base64.StdEncoding.EncodeToString([]byte(registered)), testToken} {
			if strings.Contains(out, leak) {
				t.Errorf("%s: %q came back", tool, leak)
			}
		}
		for _, kind := range []string{"secret:MY_SECRET]", "secret:MY_SECRET:base64]", "secret:SANDBOXD_TOKEN]"} {
			if !strings.Contains(out, "[REDACTED:"+kind) {
				t.Errorf("%s: no [REDACTED:%s", tool, kind)
			}
		}
	}
}

// TestErrorsAreScrubbed: an error message quoting a secret (here, in the
// path it names) is scrubbed too.
func TestErrorsAreScrubbed(t *testing.T) {
	d := startDaemon(t, Config{Secrets: map[string]string{"MY_SECRET": registered}})
	cs := d.connect(t, streamable)
	for _, path := range []string{"missing-" + registered, "../" + registered, "AKIAIOSFODNN7EXAMPLE.txt"} {
		msg := fails(t, cs, "Read", map[string]any{"file_path": path})
		if strings.Contains(msg, registered) || strings.Contains(msg, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(msg, "[REDACTED:") {
			t.Errorf("Read(%q) error: %q", path, msg)
		}
	}
}

// TestSecretsAreNotInShellEnvironment: a registered secret's variable is
// not passed to shells, nor is the daemon's token.
func TestSecretsAreNotInShellEnvironment(t *testing.T) {
	d := startDaemon(t, Config{
		Secrets: map[string]string{"MY_SECRET": registered},
		Env:     []string{"PATH=" + os.Getenv("PATH"), "MY_SECRET=" + registered, "SANDBOXD_TOKEN=" + testToken, "KEEP=kept"},
	})
	cs := d.connect(t, streamable)
	got := ok(t, cs, "Bash", map[string]any{"command": `echo "${MY_SECRET:-absent} ${SANDBOXD_TOKEN:-absent} $KEEP"`})
	if strings.TrimSpace(got) != "absent absent kept" {
		t.Fatalf("shell saw %q", got)
	}
}

// TestReadCutHidesRegisteredSecret: a --secret-env value, spaces and all,
// that straddles Read's 2,000-character cut is redacted whole: no part
// of it shows before the cut.
func TestReadCutHidesRegisteredSecret(t *testing.T) {
	t.Parallel()
	const secret = "correct horse battery staple 9731"
	d := startDaemon(t, Config{Secrets: map[string]string{"PASSPHRASE": secret}})
	line := strings.Repeat("x", 1990) + " " + secret + " " + strings.Repeat("y", 1000) + "\n"
	if err := os.WriteFile(filepath.Join(d.dir, "long.txt"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := d.connect(t, streamable)
	out := ok(t, cs, "Read", map[string]any{"file_path": "long.txt"})
	for _, part := range []string{"correct", "horse", secret[:8]} {
		if strings.Contains(out, part) {
			t.Errorf("Read shows %q of the secret at the cut: %q", part, out[max(0, len(out)-200):])
		}
	}
	if !strings.Contains(out, "[line truncated:") {
		t.Errorf("the line was not cut: %q", out[max(0, len(out)-200):])
	}
}
