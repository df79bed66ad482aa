package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
)

const otherSecret = "other-value-5678"

// sha is what `printf %s "$X" | sha256sum` prints for X=value.
func sha(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// TestSecretsByReference: secrets_available names the secrets and
// nothing more; a secret named in a call's secrets argument is in that
// call's environment (foreground, background, watched), its printed value
// comes back redacted even when written in two pieces, and no other call
// sees it.
func TestSecretsByReference(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{Secrets: map[string]string{"MY_SECRET": registered, "OTHER_TOKEN": otherSecret, "SHORT": "abc"}})
	cs := d.connect(t, streamable)

	if got, want := ok(t, cs, "secrets_available", nil), "2 secrets are available by name (pass them in a tool's secrets argument):\nMY_SECRET\nOTHER_TOKEN"; got != want {
		t.Errorf("secrets_available = %q, want %q", got, want)
	}

	const show = `printf '%s\n' "${MY_SECRET:-unset}" | sha256sum | cut -d' ' -f1; printf 'plain=%s\n' "${MY_SECRET:-unset}"; printf 'split=%s' "${MY_SECRET:0:8}"; sleep 0.3; printf '%s\n' "${MY_SECRET:8}"; echo "other=${OTHER_TOKEN:-unset}"`
	hashLine := sha(registered + "\n")
	wantRedacted := "plain=[REDACTED:secret:MY_SECRET]\nsplit=[REDACTED:secret:MY_SECRET]\nother=unset"
	got := ok(t, cs, "Bash", map[string]any{"command": show, "secrets": []string{"MY_SECRET"}})
	if want := hashLine + "\n" + wantRedacted; strings.TrimSpace(got) != want {
		t.Errorf("Bash with MY_SECRET =\n%s\nwant\n%s", got, want)
	}
	if got := ok(t, cs, "Bash", map[string]any{"command": `test "$MY_SECRET" = '` + registered + `' && echo same`, "secrets": []string{"MY_SECRET", "MY_SECRET"}}); strings.TrimSpace(got) != "same" {
		t.Errorf("test against the value: %q", got)
	}
	if got, want := ok(t, cs, "Bash", map[string]any{"command": show}), sha("unset\n")+"\nplain=unset\nsplit=\nother=unset"; strings.TrimSpace(got) != want {
		t.Errorf("a later call without secrets =\n%s\nwant\n%s", got, want)
	}

	id := shellID.FindString(ok(t, cs, "Bash", map[string]any{"command": show, "run_in_background": true, "secrets": []string{"MY_SECRET"}}))
	var out strings.Builder
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "Status: exited") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out.WriteString(ok(t, cs, "BashOutput", map[string]any{"bash_id": id}))
	}
	for _, want := range append(strings.Split(wantRedacted, "\n"), hashLine) {
		if !strings.Contains(out.String(), want) {
			t.Errorf("background shell with MY_SECRET: no %q in its output", want)
		}
	}
	if strings.Contains(out.String(), registered[8:]) {
		t.Errorf("background shell with MY_SECRET:\n%s", out.String())
	}

	id = startWatch(t, cs, map[string]any{"command": `echo "ERROR token $OTHER_TOKEN"; exec sleep 300`, "error_patterns": []string{"ERROR", "other-value"}, "secrets": []string{"OTHER_TOKEN"}})
	e, _ := awaitEvent(t, cs, id, 0, watch.KindMatch, 20*time.Second)
	if e.Line != "ERROR token [REDACTED:secret:OTHER_TOKEN]" || e.Pattern != "ERROR" {
		t.Errorf("watched secret event %+v", e)
	}
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Bash", map[string]any{"command": "true", "secrets": []string{"MY_SECRET", "NOPE"}}, `secrets: unknown secret "NOPE"; the available secrets are: MY_SECRET, OTHER_TOKEN`},
		{"Bash", map[string]any{"command": "true", "secrets": []string{"SHORT"}}, `secrets: secret "SHORT" is shorter than 4 bytes`},
		{"Bash", map[string]any{"command": "true", "secrets": "MY_SECRET"}, `Bash: argument "secrets": want an array of strings, got a string`},
		{"watch_process", map[string]any{"command": "true", "secrets": []string{"SANDBOXD_TOKEN"}}, `unknown secret "SANDBOXD_TOKEN"`},
		{"run_lint", map[string]any{"secrets": []string{"NOPE"}}, `unknown secret "NOPE"`},
		{"run_typecheck", map[string]any{"secrets": []string{"NOPE"}}, `unknown secret "NOPE"`},
		{"run_failing_tests", map[string]any{"secrets": []string{"NOPE"}}, `unknown secret "NOPE"`},
	} {
		got := fails(t, cs, tc.tool, tc.args)
		if !strings.Contains(got, tc.want) || strings.Contains(got, registered) || strings.Contains(got, otherSecret) || strings.Contains(got, testToken) {
			t.Errorf("%s(%v) = %q, want %q in it and no value", tc.tool, tc.args, got, tc.want)
		}
	}
}

// TestSecretsAvailableWithNone: a sandbox without secrets says so.
func TestSecretsAvailableWithNone(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	if got := ok(t, cs, "secrets_available", nil); got != "No secrets are configured (sandboxd --secret-env)." {
		t.Errorf("secrets_available = %q", got)
	}
	if got := fails(t, cs, "Bash", map[string]any{"command": "true", "secrets": []string{"X"}}); got != `secrets: unknown secret "X"; no secrets are configured` {
		t.Errorf("unknown secret with none configured: %q", got)
	}
}

// TestRunTestsWithSecrets: run_tests and run_failing_tests put a named
// secret in the test process's environment; the value the test prints is
// redacted, and a run without it sees nothing.
func TestRunTestsWithSecrets(t *testing.T) {
	t.Parallel()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod": "module example.com/sec\n\ngo 1.22\n",
		"sec_test.go": `package sec

import (
	"crypto/sha256"
	"os"
	"testing"
)

func TestSecret(t *testing.T) {
	v := os.Getenv("MY_SECRET")
	t.Errorf("digest %x of value %s", sha256.Sum256([]byte(v)), v)
}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, Config{
		Workspaces: []Workspace{{Dir: dir}},
		Secrets:    map[string]string{"MY_SECRET": registered},
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C",
			"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
		},
	})
	cs := d.connect(t, streamable)
	withSecret := "digest " + sha(registered) + " of value [REDACTED:secret:MY_SECRET]"
	for _, tool := range []string{"run_tests", "run_failing_tests"} {
		got := ok(t, cs, tool, map[string]any{"timeout": 120000, "secrets": []string{"MY_SECRET"}})
		if !strings.Contains(got, withSecret) || strings.Contains(got, registered) {
			t.Errorf("%s with MY_SECRET:\n%s\nwant %q in it", tool, got, withSecret)
		}
	}
	got := ok(t, cs, "run_tests", map[string]any{"timeout": 120000})
	if want := "digest " + sha("") + " of value\n"; !strings.Contains(got, want) {
		t.Errorf("run_tests without secrets:\n%s\nwant %q in it", got, want)
	}
}
