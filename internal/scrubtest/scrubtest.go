// Package scrubtest holds credentials shaped like the real thing and
// valid for nothing, for the tests of everything that must redact them.
package scrubtest

import "strings"

// Credential is one secret in the context it is found in.
type Credential struct {
	Kind    string // the kind its redaction names: [REDACTED:Kind]
	Secret  string
	Context string // %s marks where the secret goes; only it is redacted
}

// Line is the credential in its context.
func (c Credential) Line() string { return strings.Replace(c.Context, "%s", c.Secret, 1) }

// Redacted is the context with the secret redacted.
func (c Credential) Redacted() string {
	return strings.Replace(c.Context, "%s", "[REDACTED:"+c.Kind+"]", 1)
}

// Credentials has every format the scrubber knows. The truncated private
// key is last: it is redacted to the end of the text, as the rest of a
// key cut short is unknown.
var Credentials = []Credential{
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
	{"url-credentials", "s3cretpass", "postgres://app:%s@db:5432/app"},
	{"secret-assignment", "tok-12345-abcdef", "GITHUB_TOKEN=%s"},
	{"secret-assignment", "pa55-w0rd-xyz", "DB_PASSWORD=%s"},
	{"secret-assignment", "json-secret-value", `"client_secret": "%s"`},
	{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B", "truncated: %s"},
}
