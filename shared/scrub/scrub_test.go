package scrub

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/scrubtest"
)

func TestFormats(t *testing.T) {
	s := New(nil)
	for _, c := range scrubtest.Credentials {
		if got, want := s.String(c.Line()), c.Redacted(); got != want {
			t.Errorf("%s:\n in  %q\n got %q\nwant %q", c.Kind, c.Line(), got, want)
		}
	}
}

func TestURLCredentials(t *testing.T) {
	s := New(nil)
	for in, want := range map[string]string{
		"git clone https://user:hunter2pw@github.com/x/y":    "git clone https://user:[REDACTED:url-credentials]@github.com/x/y",
		"DATABASE_URL=postgres://app:s3cr3t!@db:5432/app":    "DATABASE_URL=postgres://app:[REDACTED:url-credentials]@db:5432/app",
		"redis://default:longpassword@cache:6379 and more":   "redis://default:[REDACTED:url-credentials]@cache:6379 and more",
		"see https://example.com/path and mailto:x@y.z here": "see https://example.com/path and mailto:x@y.z here",
	} {
		if got := s.String(in); got != want {
			t.Errorf("\n in  %q\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestSecretAssignments(t *testing.T) {
	s := New(nil)
	for in, want := range map[string]string{
		"GITHUB_TOKEN=abc123def456":                                      "GITHUB_TOKEN=[REDACTED:secret-assignment]",
		"export DB_PASSWORD='c0rrect horse'":                             "export DB_PASSWORD='[REDACTED:secret-assignment]'",
		"DB_PASSWORD=hunter22 next":                                      "DB_PASSWORD=[REDACTED:secret-assignment] next",
		`{"api_key": "k-1234567", "user": "bob"}`:                        `{"api_key": "[REDACTED:secret-assignment]", "user": "bob"}`,
		`"client_secret":"zq7Rk2pX9w"`:                                   `"client_secret":"[REDACTED:secret-assignment]"`,
		`SLACK_BOT_TOKEN="xyz w1th spaces"`:                              `SLACK_BOT_TOKEN="[REDACTED:secret-assignment]"`,
		"MY_APP_PRIVATE_KEY: abcd3fgh":                                   "MY_APP_PRIVATE_KEY: [REDACTED:secret-assignment]",
		"passwd=letmein1":                                                "passwd=[REDACTED:secret-assignment]",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS_SECRET_ACCESS_KEY=[REDACTED:secret-assignment]",
		// Not secrets: ordinary code and prose.
		`password := flag.String("password", "", "the password")`: `password := flag.String("password", "", "the password")`,
		"the token is refreshed hourly":                           "the token is refreshed hourly",
		"TOKEN_TTL_SECONDS=3600":                                  "TOKEN_TTL_SECONDS=3600",
		"grep -rn password .":                                     "grep -rn password .",
		`read "ws/outside/secret": file does not exist`:           `read "ws/outside/secret": file does not exist`,
		`{"password": null, "token": 1234567}`:                    `{"password": null, "token": 1234567}`,
		// A path, an expression, a template, prose, a word: not values.
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json":            "GOOGLE_APPLICATION_CREDENTIALS=/k.json",
		"token := strings.TrimSpace(token)":                 "token := strings.TrimSpace(token)",
		"if token == expected2 {":                           "if token == expected2 {",
		"password: ${DB_PASSWORD}":                          "password: ${DB_PASSWORD}",
		`password = "{{ .Values.db.password }}"`:            `password = "{{ .Values.db.password }}"`,
		`{"password": "Password", "token": "Access token"}`: `{"password": "Password", "token": "Access token"}`,
		"secret_key = settings.SECRET_KEY":                  "secret_key = settings.SECRET_KEY",
		"api_key = api_key_v2":                              "api_key = api_key_v2",
		"PASSWORD=correct-horse-battery":                    "PASSWORD=correct-horse-battery",
	} {
		if got := s.String(in); got != want {
			t.Errorf("\n in  %q\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRegisteredValues(t *testing.T) {
	const secret = "p@ss w/ord+&=" // every encoding differs
	s := New(map[string]string{"DEPLOY_KEY": secret, "SHORT": "abc", "EMPTY": ""})
	for _, enc := range []string{
		secret,
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret),
		url.PathEscape(secret),
	} {
		got := s.String("value: <" + enc + "> end")
		if strings.Contains(got, enc) || !strings.Contains(got, "[REDACTED:secret:DEPLOY_KEY") {
			t.Errorf("%q -> %q", enc, got)
		}
	}
	// Values under 4 bytes would redact ordinary text: ignored.
	if got := s.String("abc and abcdef"); got != "abc and abcdef" {
		t.Errorf("short value redacted: %q", got)
	}
}

func TestStreamCatchesSecretsAcrossReads(t *testing.T) {
	token := "ghp_" + strings.Repeat("a1B2", 9)
	pem := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\nxyz\n-----END EC PRIVATE KEY-----\n"
	registered := "registered-value-123"
	whole := "start\ntoken " + token + " here\n" + pem + "value " + registered + "\nend"
	s := New(map[string]string{"X": registered})
	want := s.String(whole)
	if strings.Contains(want, token) || strings.Contains(want, "MHcCAQEEIB") || strings.Contains(want, registered) {
		t.Fatalf("the whole text is not scrubbed: %q", want)
	}
	// Every way of cutting it in two gives the same scrubbed text.
	for i := 0; i <= len(whole); i++ {
		st := s.NewStream()
		got := st.Write(whole[:i]) + st.Write(whole[i:]) + st.Flush()
		if got != want {
			t.Fatalf("cut at %d:\n got %q\nwant %q", i, got, want)
		}
	}
	// And in many small pieces.
	st := s.NewStream()
	var got strings.Builder
	for i := 0; i < len(whole); i += 3 {
		got.WriteString(st.Write(whole[i:min(i+3, len(whole))]))
	}
	got.WriteString(st.Flush())
	if got.String() != want {
		t.Fatalf("3-byte pieces:\n got %q\nwant %q", got.String(), want)
	}
}

func TestStreamReleasesLongLines(t *testing.T) {
	st := New(nil).NewStream()
	long := strings.Repeat("x", maxHold+10)
	out := st.Write(long)
	if len(out) < maxHold-cutWindow {
		t.Fatalf("a line over the hold limit was kept back (%d bytes out)", len(out))
	}
	if out += st.Flush(); out != long {
		t.Fatalf("the line came out changed (%d bytes)", len(out))
	}
}

// TestStreamCutsLongLinesWhole: a line over the hold limit is released
// in pieces, and a secret on it is redacted whole wherever it falls
// relative to the 64 KiB boundary and to the pieces it arrives in.
// Issue 16, item 2.
func TestStreamCutsLongLinesWhole(t *testing.T) {
	registered := "registered value, with spaces 42"
	s := New(map[string]string{"X": registered})
	secrets := []string{registered, `DB_PASSWORD="c0rrect horse battery"`}
	// One of each shape: a prefixed token, a long one, a URL, a JWT, a
	// key=value with a group, an Authorization header.
	kinds := map[string]bool{"github-token": true, "openai-api-key": true, "slack-webhook": true,
		"jwt": true, "azure-storage-key": true, "url-credentials": true, "authorization-header": true}
	for _, c := range scrubtest.Credentials {
		if kinds[c.Kind] {
			delete(kinds, c.Kind)
			secrets = append(secrets, c.Line())
		}
	}
	filler := strings.Repeat("lorem ipsum dolor, ", 3*maxHold/19)
	for _, piece := range []int{1 << 10, 64 << 10} {
		// The first piece that takes the line past the limit: the old
		// stream cut there, the new one keeps back a window.
		boundary := (maxHold/piece + 1) * piece
		for _, secret := range secrets {
			for _, cut := range []int{boundary, boundary - cutWindow - len(registered)} {
				at := cut - len(secret)/2
				text := filler[:at] + " " + secret + " " + filler[:2*cutWindow] + "\n"
				st := s.NewStream()
				var got strings.Builder
				for i := 0; i < len(text); i += piece {
					got.WriteString(st.Write(text[i:min(i+piece, len(text))]))
				}
				got.WriteString(st.Flush())
				if want := s.String(text); got.String() != want {
					t.Fatalf("%.30q across byte %d in pieces of %d: the stream and String differ", secret, cut, piece)
				}
			}
		}
	}
	// A line of one run, no place to cut between words: no piece of a
	// secret straddling the forced cut shows, on either side.
	run := strings.Repeat("QUJD", maxHold/4)
	value := "Zq9Zq9Zq9Zq9registeredZq9Zq9Zq9"
	s = New(map[string]string{"RUN": value})
	for _, at := range []int{maxHold - cutWindow - 10, maxHold - cutWindow - len(value), maxHold - cutWindow + 5} {
		text := run[:at] + value + run
		st := s.NewStream()
		out := st.Write(text[:maxHold+1]) + st.Write(text[maxHold+1:]) + st.Flush()
		for i := 0; i+6 <= len(value); i++ {
			if strings.Contains(out, value[i:i+6]) {
				t.Fatalf("at %d: %q of the value shows", at, value[i:i+6])
			}
		}
	}
}

// TestManyLines: only the lines holding a trigger are rewritten, and the
// text around them survives byte for byte.
func TestManyLines(t *testing.T) {
	s := New(nil)
	key := "AKIAIOSFODNN7EXAMPLE"
	in := key + " first\nplain line\n\nDB_PASSWORD=hunter22 and " + key + "\nasia is a word\nlast " + key
	want := "[REDACTED:aws-access-key-id] first\nplain line\n\nDB_PASSWORD=[REDACTED:secret-assignment] and [REDACTED:aws-access-key-id]\nasia is a word\nlast [REDACTED:aws-access-key-id]"
	if got := s.String(in); got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	long := strings.Repeat("nothing to see here\n", 10000)
	if got := s.String(long); got != long {
		t.Error("clean text changed")
	}
}

func BenchmarkCleanText(b *testing.B) {
	s := New(map[string]string{"X": "registered-value"})
	text := strings.Repeat("line 1234: the quick brown fox jumps over the lazy dog, again and again\n", 2000)
	for b.Loop() {
		s.String(text)
	}
}
