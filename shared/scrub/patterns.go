package scrub

import "regexp"

// A pattern is one well-known credential format. When group is set, only
// that submatch is redacted (the value of an assignment, the password of
// a URL), so the text around it stays readable; anyGroup redacts the
// first submatch that matched.
//
// triggers are literals every match contains (lower-case when fold is
// set, matched against the text lower-cased): Go's regexp engine has no
// DFA and is slow on long text, so a pattern runs only on the lines that
// hold one of its triggers, and text with none skips it at memchr speed.
// multiline patterns run on the whole text once a trigger is present.
type pattern struct {
	kind      string
	re        *regexp.Regexp
	group     int
	triggers  []string
	fold      bool
	multiline bool
}

// secretName is the end of a variable or key name that says it holds a
// secret. It is matched as the suffix of a name made of letters, digits,
// _ and -, so GITHUB_TOKEN, DB_PASSWORD and aws_secret match, which a
// word boundary before TOKEN would miss.
const secretName = `(?i:[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|CREDENTIALS|SECRET_KEY|ACCESS_KEY))`

const anyGroup = -1

var patterns = []pattern{
	{kind: "pem-private-key", re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)`), triggers: []string{"PRIVATE KEY-----"}, multiline: true},
	{kind: "anthropic-api-key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), triggers: []string{"sk-ant-"}},
	{kind: "openai-api-key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), triggers: []string{"sk-"}},
	{kind: "github-token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{kind: "aws-access-key-id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), triggers: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
	{kind: "google-api-key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), triggers: []string{"AIza"}},
	{kind: "slack-token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), triggers: []string{"xox"}},
	{kind: "slack-webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`), triggers: []string{"hooks.slack.com"}},
	{kind: "stripe-key", re: regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`), triggers: []string{"_live_", "_test_"}},
	{kind: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), triggers: []string{"eyJ"}},
	{kind: "url-credentials", re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@"']+:([^\s@/"']+)@`), group: 1, triggers: []string{"://"}},
	// NAME=value, NAME: value, export NAME='value', and "name": "value".
	// A quoted value is redacted to its closing quote. A quoted name takes
	// only a quoted value, as JSON has it: `"secret": file not found` in
	// a message is prose about a path, not an assignment.
	{kind: "secret-assignment", re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])(?:` + secretName +
		`\s*[=:]\s*(?:"([^"\n]{4,})"|'([^'\n]{4,})'|([^\s"',;}]{4,}))|["']` + secretName +
		`["']\s*[=:]\s*(?:"([^"\n]{4,})"|'([^'\n]{4,})'))`), group: anyGroup, triggers: []string{"token", "secret", "password", "passwd", "api_key", "apikey", "private_key", "credentials", "access_key"}, fold: true},
}
