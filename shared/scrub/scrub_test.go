package scrub

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// Test credentials: shaped like the real thing, valid for nothing.
var formats = []struct {
	kind, secret, context string
}{
	{"aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = %s"},
	{"aws-access-key-id", "ASIAY34FZKBOKMUTVV7A", "key %s in use"},
	{"github-token", "ghp_" + strings.Repeat("a1B2", 9), "token: %s"},
	{"github-token", "gho_" + strings.Repeat("Zz09", 9), "%s"},
	{"github-token", "ghu_" + strings.Repeat("Qx7k", 9), "(%s)"},
	{"github-token", "ghs_" + strings.Repeat("m3N4", 9), "remote: %s"},
	{"github-token", "github_pat_11ABCDEFG0" + strings.Repeat("x", 12) + "_" + strings.Repeat("Y", 59), "pat %s end"},
	{"anthropic-api-key", "sk-ant-api03-" + strings.Repeat("AbC1_-", 8), "key=%s"},
	{"openai-api-key", "sk-proj-" + strings.Repeat("T3stK3y", 6), "Bearer %s"},
	{"openai-api-key", "sk-" + strings.Repeat("abcDEF123", 5), "OPENAI %s"},
	{"google-api-key", "AIzaSyD" + strings.Repeat("x1Y2z", 6) + "ab", "url?key=%s&q=1"},
	{"slack-token", "xoxb-1234567890-0987654321-" + strings.Repeat("aB", 12), "slack %s"},
	{"slack-webhook", "https://hooks.slack.com/services/T000/B000/" + strings.Repeat("X", 24), "post to %s now"},
	{"stripe-key", "sk_live_" + strings.Repeat("4eC39HqLyjWD", 2), "stripe %s"},
	{"stripe-key", "rk_test_" + strings.Repeat("51Hx", 6), "%s"},
	{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "Authorization: Bearer %s"},
	{"pem-private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1\nabc+/=\n-----END RSA PRIVATE KEY-----", "key:\n%s\ndone"},
	{"pem-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "%s"},
	{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B", "truncated: %s"},
}

func TestFormats(t *testing.T) {
	s := New(nil)
	for _, f := range formats {
		in := strings.Replace(f.context, "%s", f.secret, 1)
		got := s.String(in)
		want := strings.Replace(f.context, "%s", "[REDACTED:"+f.kind+"]", 1)
		if got != want {
			t.Errorf("%s:\n in  %q\n got %q\nwant %q", f.kind, in, got, want)
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
		"export DB_PASSWORD='correct horse'":                             "export DB_PASSWORD='[REDACTED:secret-assignment]'",
		"DB_PASSWORD=hunter22 next":                                      "DB_PASSWORD=[REDACTED:secret-assignment] next",
		`{"api_key": "k-1234567", "user": "bob"}`:                        `{"api_key": "[REDACTED:secret-assignment]", "user": "bob"}`,
		`"client_secret":"zzzz9999"`:                                     `"client_secret":"[REDACTED:secret-assignment]"`,
		`SLACK_BOT_TOKEN="xyz with spaces"`:                              `SLACK_BOT_TOKEN="[REDACTED:secret-assignment]"`,
		"MY_APP_PRIVATE_KEY: abcdefgh":                                   "MY_APP_PRIVATE_KEY: [REDACTED:secret-assignment]",
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json":                         "GOOGLE_APPLICATION_CREDENTIALS=[REDACTED:secret-assignment]",
		"passwd=letmein1":                                                "passwd=[REDACTED:secret-assignment]",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS_SECRET_ACCESS_KEY=[REDACTED:secret-assignment]",
		// Not secrets: ordinary code and prose.
		`password := flag.String("password", "", "the password")`: `password := flag.String("password", "", "the password")`,
		"the token is refreshed hourly":                           "the token is refreshed hourly",
		"TOKEN_TTL_SECONDS=3600":                                  "TOKEN_TTL_SECONDS=3600",
		"grep -rn password .":                                     "grep -rn password .",
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
	if out := st.Write(long); out != long {
		t.Fatalf("a line over the hold limit was kept back (%d bytes out)", len(out))
	}
}
