package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// hostKey is forwarded from the test's environment to the hooks as the
// bare name keyVar. It is an openai-api-key too; a registered value is
// redacted first, under its variable's name.
const (
	keyVar    = "PKS_HOOK_TEST_KEY"
	hostKey   = "sk-proj-" + "F0rwardedH0stKey1234"
	keyMarker = "[REDACTED:secret:" + keyVar + "]"
)

// secretLogs returns a logger writing JSON lines at debug level, and a
// function that reads them back, without timestamps and elapsed times.
// It fails the test if a line holds hostKey or one of also.
func secretLogs(t *testing.T, also ...string) (hclog.Logger, func() []map[string]any) {
	t.Helper()
	var buf syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug, JSONFormat: true})
	return log, func() []map[string]any {
		t.Helper()
		var lines []map[string]any
		sc := bufio.NewScanner(strings.NewReader(buf.String()))
		for sc.Scan() {
			for _, secret := range append([]string{hostKey}, also...) {
				if strings.Contains(sc.Text(), secret) {
					t.Errorf("log line holds %q: %s", secret, sc.Text())
				}
			}
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", sc.Text(), err)
			}
			delete(line, "@timestamp")
			delete(line, "elapsed")
			lines = append(lines, line)
		}
		return lines
	}
}

func assertLogs(t *testing.T, got, want []map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("logs\n got %v\nwant %v", got, want)
	}
}

func denyLog(hook, reason string) map[string]any {
	return map[string]any{"@level": "debug", "@message": "filter hook denied", "hook": hook, "reason": reason}
}

// TestFilterDenyScrubsForwardedSecrets: a filter hook that prints what it
// was given on stderr and fails. The forwarded host value, a literal
// value and a known format are redacted in the reason and the log; a
// 3-byte value is below scrub's minimum and shown, a 4-byte one is not.
func TestFilterDenyScrubsForwardedSecrets(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	dir := t.TempDir()
	script := writeScript(t, dir, "leak.sh", `cat >/dev/null
echo "key=$`+keyVar+` lit=$LITERAL short=$SHORT level=$LOG_LEVEL aws=AKIAIOSFODNN7EXAMPLE" >&2
exit 1`)
	path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n"+
		"  env: ["+keyVar+", LITERAL=literal-s3cret, SHORT=abc, LOG_LEVEL=info]\n")
	log, logs := secretLogs(t, "literal-s3cret", "AKIAIOSFODNN7EXAMPLE")
	rt := load(t, path, Options{Logger: log})
	d, err := rt.Call(context.Background(), "h", beforeCall())
	if err != nil {
		t.Fatal(err)
	}
	want := `hook "h" failed: process exited with code 1 (stderr: key=` + keyMarker +
		` lit=[REDACTED:secret:LITERAL] short=abc level=[REDACTED:secret:LOG_LEVEL] aws=[REDACTED:aws-access-key-id])`
	assertDecision(t, d, Decision{Reason: want})
	assertLogs(t, logs(), []map[string]any{denyLog("h", want)})
}

// TestStderrSecretAcrossTheCut: stderr is scrubbed before it is cut to
// 1 KiB, so a secret across byte 1024 is redacted, not half shown, and a
// marker the cut would split is left out with the rest.
func TestStderrSecretAcrossTheCut(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	for _, c := range []struct {
		name   string
		before int // bytes of stderr before the secret
		want   string
	}{
		// The secret spans bytes 1000 to 1028, its marker 1000 to 1035.
		{"marker across the cut", 1000, strings.Repeat("e", 1000) + "… [2028 bytes in all]"},
		// The secret spans bytes 980 to 1008; its marker ends at 1015.
		{"marker before the cut", 980, strings.Repeat("e", 980) + keyMarker + strings.Repeat("e", 1024-980-len(keyMarker)) + "… [2008 bytes in all]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// The padding is in the script, not in env, where it would be
			// registered as a secret itself.
			script := writeScript(t, dir, "leak.sh", `printf '%s%s%s' `+strings.Repeat("e", c.before)+` "$`+keyVar+`" `+strings.Repeat("e", 1000)+` >&2
exit 1`)
			path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  env: ["+keyVar+"]\n")
			log, logs := secretLogs(t)
			rt := load(t, path, Options{Logger: log})
			d, _ := rt.Call(context.Background(), "h", beforeCall())
			want := `hook "h" failed: process exited with code 1 (stderr: ` + c.want + `)`
			assertDecision(t, d, Decision{Reason: want})
			assertLogs(t, logs(), []map[string]any{denyLog("h", want)})
		})
	}
}

// TestStderrCutShortMidSecret: the sandbox's output limit stops stderr
// in the middle of the secret, so the excerpt ends with its first 15
// bytes, which no pattern knows; they are redacted as the secret's start.
func TestStderrCutShortMidSecret(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	dir := t.TempDir()
	script := writeScript(t, dir, "leak.sh", `printf 'key: %s trailing\n' "$`+keyVar+`" >&2; exit 1`)
	path := writeConfig(t, "small:\n  mode: direct\n  output_limit: 20\n",
		"h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  sandbox: small\n  env: ["+keyVar+"]\n")
	log, logs := secretLogs(t, hostKey[:15])
	rt := load(t, path, Options{Logger: log})
	d, _ := rt.Call(context.Background(), "h", beforeCall())
	want := `hook "h" failed: process exited with code 1 (stderr: key: ` + keyMarker + `… [over 20 bytes])`
	assertDecision(t, d, Decision{Reason: want})
	assertLogs(t, logs(), []map[string]any{denyLog("h", want)})
}

// TestInvalidVerdictScrubsStdout: the pieces of stdout an invalid-verdict
// reason quotes are scrubbed whole, then cut to 40 bytes.
func TestInvalidVerdictScrubsStdout(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	for _, c := range []struct{ name, stdout, want string }{
		{"trailing data", `printf '{"allow": true} %s\n' "$` + keyVar + `"`,
			`unexpected data after the JSON value: "` + keyMarker + `"`},
		// The raw secret spans bytes 21 to 49 of the piece, across the
		// cut at 40; its marker too, so it is left out with the rest.
		{"trailing data across the cut", `printf '{"allow": true} %s %s\n' ` + strings.Repeat("e", 20) + ` "$` + keyVar + `"`,
			`unexpected data after the JSON value: "` + strings.Repeat("e", 20) + ` ..."`},
		{"allow of the wrong type", `printf '{"allow": "%s"}' "$` + keyVar + `"`,
			`allow must be a boolean (true or false), got "` + keyMarker + `" (a string)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			script := writeScript(t, dir, "leak.sh", c.stdout)
			path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  env: ["+keyVar+"]\n")
			log, logs := secretLogs(t)
			rt := load(t, path, Options{Logger: log})
			d, _ := rt.Call(context.Background(), "h", beforeCall())
			want := `hook "h" printed an invalid verdict: invalid hook verdict: ` + c.want
			assertDecision(t, d, Decision{Reason: want})
			assertLogs(t, logs(), []map[string]any{denyLog("h", want)})
		})
	}
}

// TestVerdictReasonPassesThrough: the reason a hook denies with is its
// answer and reaches the caller as written (PromptKit does the same);
// the runtime's own log of it is scrubbed.
func TestVerdictReasonPassesThrough(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	dir := t.TempDir()
	script := writeScript(t, dir, "deny.sh", `printf '{"allow": false, "reason": "prompt holds %s"}' "$`+keyVar+`"`)
	path := writeConfig(t, "", "h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  env: ["+keyVar+"]\n")
	log, logs := secretLogs(t)
	rt := load(t, path, Options{Logger: log})
	d, _ := rt.Call(context.Background(), "h", beforeCall())
	assertDecision(t, d, Decision{Reason: "prompt holds " + hostKey})
	assertLogs(t, logs(), []map[string]any{denyLog("h", "prompt holds "+keyMarker)})
}

// TestObserveFailureLogIsScrubbed: an observe hook's failure is logged
// with its stderr excerpt, scrubbed.
func TestObserveFailureLogIsScrubbed(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	dir := t.TempDir()
	script := writeScript(t, dir, "audit.sh", `echo "audit store rejected key $`+keyVar+`" >&2; exit 7`)
	path := writeConfig(t, "", "audit:\n  command: "+script+"\n  hook: session\n  phases: [session_end]\n  mode: observe\n  env: ["+keyVar+"]\n")
	log, logs := secretLogs(t)
	rt, err := Load(path, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Run(context.Background(), &wire.Payload{Hook: wire.HookSession, Phase: "session_end", SessionEvent: &wire.SessionEvent{}})
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertLogs(t, logs(), []map[string]any{{
		"@level": "error", "@message": "observe hook failed", "hook": "audit", "sandbox": "direct",
		"error": "process exited with code 7", "stderr": "audit store rejected key " + keyMarker,
	}})
}

// TestSandboxEnvIsScrubbed: a sandbox that forwards an env list of its
// own to every hook it runs says so (sandbox.EnvForwarder), and its
// values are registered too.
func TestSandboxEnvIsScrubbed(t *testing.T) {
	t.Setenv(keyVar, hostKey)
	reg := NewRegistry()
	if err := reg.Register("envbox", openEnvBox); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := writeScript(t, dir, "leak.sh", `echo "$`+keyVar+` $BOX_LITERAL" >&2; exit 1`)
	path := writeConfig(t, "box:\n  mode: envbox\n  env: ["+keyVar+", BOX_LITERAL=box-literal-value]\n",
		"h:\n  command: "+script+"\n  hook: provider\n  phases: [before_call]\n  sandbox: box\n")
	log, logs := secretLogs(t, "box-literal-value")
	rt := load(t, path, Options{Registry: reg, Logger: log})
	d, _ := rt.Call(context.Background(), "h", beforeCall())
	want := `hook "h" failed: process exited with code 1 (stderr: ` + keyMarker + ` [REDACTED:secret:BOX_LITERAL])`
	assertDecision(t, d, Decision{Reason: want})
	assertLogs(t, logs(), []map[string]any{denyLog("h", want)})
}

// envBox is the direct sandbox with an env list in its config, which it
// puts before each request's and reports, as the docker and kubectl
// backends do.
type envBox struct {
	*direct.Sandbox
	env []string
}

func openEnvBox(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	b := &envBox{Sandbox: direct.New(name, shell.Options{})}
	for k, v := range cfg {
		list, ok := v.([]any)
		if k != "env" || !ok {
			return nil, &unknownKeyError{k}
		}
		for _, e := range list {
			b.env = append(b.env, e.(string))
		}
	}
	return b, nil
}

func (b *envBox) ForwardedEnv() []string { return b.env }

func (b *envBox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	req.Env = append(append([]string(nil), b.env...), req.Env...)
	return b.Sandbox.Spawn(ctx, req)
}

type unknownKeyError struct{ key string }

func (e *unknownKeyError) Error() string { return "envbox: unexpected key " + e.key }
