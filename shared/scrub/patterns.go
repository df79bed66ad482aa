package scrub

import "regexp"

// A pattern is one well-known credential format. When group is set, only
// that submatch is redacted (the value of an assignment, the password of
// a URL), so the text around it stays readable; anyGroup redacts the
// first submatch that matched.
type pattern struct {
	kind  string
	re    *regexp.Regexp
	group int
}

// secretName is the end of a variable or key name that says it holds a
// secret. It is matched as the suffix of a name made of letters, digits,
// _ and -, so GITHUB_TOKEN, DB_PASSWORD and aws_secret match, which a
// word boundary before TOKEN would miss.
const secretName = `(?i:[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|CREDENTIALS|SECRET_KEY|ACCESS_KEY))`

const anyGroup = -1

var patterns = []pattern{
	{kind: "pem-private-key", re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)`)},
	{kind: "anthropic-api-key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: "openai-api-key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{kind: "github-token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{kind: "aws-access-key-id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{kind: "google-api-key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: "slack-token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{kind: "slack-webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`)},
	{kind: "stripe-key", re: regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`)},
	{kind: "url-credentials", re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@"']+:([^\s@/"']+)@`), group: 1},
	// NAME=value, NAME: value, "name": "value", export NAME='value'.
	// A quoted value is redacted to its closing quote.
	{kind: "secret-assignment", re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])["']?` + secretName +
		`["']?\s*[=:]\s*(?:"([^"\n]{4,})"|'([^'\n]{4,})'|([^\s"',;}]{4,}))`), group: anyGroup},
}
