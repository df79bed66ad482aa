package scrub

import (
	"regexp"
	"sync"
)

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
//
// valid, when set, judges what a match would redact (and which group it
// is): a format whose shape alone is not enough, such as a prefix and a
// run of letters that a CSS class has too, is redacted only when its
// body looks random (see valid.go).
type pattern struct {
	kind      string
	re        *regexp.Regexp
	group     int
	triggers  []string
	fold      bool
	multiline bool
	valid     func(v string, group int) bool
}

// secretName is the end of a variable or key name that says it holds a
// secret. It is matched as the suffix of a name made of letters, digits,
// _ and -, so GITHUB_TOKEN, DB_PASSWORD and aws_secret match, which a
// word boundary before TOKEN would miss.
const secretName = `(?i:[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|CREDENTIALS|SECRET_KEY|ACCESS_KEY))` // #nosec G101 -- a pattern that finds credentials' names, not one

// assignOp is what stands between a name and its value: =, :, Go's :=
// and Ruby's or PHP's =>.
const assignOp = `\s*(?::=|=>|[=:])\s*`

// bareValue is an unquoted value: no quotes, brackets, parentheses,
// commas or semicolons (a call, an index, a literal of a collection) and
// it must end at a space, a delimiter or the end of the line, so
// `config["api_key"]` and `strings.TrimSpace(token)` offer no value at
// all. It may hold = but not begin with one (== compares). The delimiter
// is matched outside the group.
const bareValue = "([^\\s\"'`,;(){}\\[\\]<>=][^\\s\"'`,;(){}\\[\\]<>]{7,511})(?:$|[\\s,;)}\\]>\"'])"

const anyGroup = -1

// apiKeyHeaders are HTTP headers that carry an API key; their names say
// nothing secret (x-honeycomb-team), so secret-assignment misses them.
// apiKeyHeaderTriggers are their distinctive parts, lower-case.
const apiKeyHeaders = `\b(?:x-honeycomb-team|x-api-key|api-key|dd-api-key|x-goog-api-key|x-sf-token|x-signalfx-token|(?:x-)?lightstep-access-token|(?:x-)?signoz-(?:access-token|ingestion-key)|x-newrelic-license-key|api-token|x-auth-token|x-access-token|x-elastic-apikey)` // #nosec G101 -- a pattern that finds API key headers, not one

var apiKeyHeaderTriggers = []string{"x-honeycomb-team", "api-key", "x-sf-token", "x-signalfx-token", "lightstep-access-token", "signoz-", "x-newrelic-license-key", "api-token", "x-auth-token", "x-access-token", "x-elastic-apikey"}

// patterns are compiled on first use, not at package init: every
// program that links scrub (the CLI, each plugin) would otherwise pay
// for compiling them at each start, about 2 ms, whether it scrubs or not.
//
// A format whose prefix is distinctive (ghp_, glpat-, sk-ant-, eyJ...)
// is found glued to the letters before it too (aaaaghp_...), as output
// that runs words together shows it; one whose prefix letters are
// common in words and base64 (AKIA, AIza, SK, key-, dapi, hf_) starts at
// a word boundary.
var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// A block cut short is redacted to the end of the text, when it goes
		// on as a key would: a line of base64, or nothing more.
		{kind: "pem-private-key", re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[ \t]*\r?\n[A-Za-z0-9+/=][\s\S]*$|[ \t]*\r?\n?$)`), triggers: []string{"PRIVATE KEY"}, multiline: true},
		{kind: "anthropic-api-key", re: regexp.MustCompile(`sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_-]{32,}`), triggers: []string{"sk-ant-"}, valid: randomBody(len("sk-ant-"))},
		// Legacy keys are sk- and 48 letters and digits; project, service
		// account and admin keys have a second prefix and - and _ too.
		{kind: "openai-api-key", re: regexp.MustCompile(`(?:sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{32,}\b)`), triggers: []string{"sk-"}, valid: randomBody(len("sk-"))},
		{kind: "github-token", re: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b`), triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, valid: randomBody(4)},
		{kind: "gitlab-token", re: regexp.MustCompile(`gl(?:pat|dt|rt|ptt|ft|imt|soat|cbt)-[A-Za-z0-9_-]{20,}`), triggers: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glsoat-", "glcbt-"}, valid: randomBody(5)},
		{kind: "aws-access-key-id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), triggers: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
		{kind: "google-api-key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), triggers: []string{"AIza"}},
		{kind: "slack-token", re: regexp.MustCompile(`(?:xox[abposre]-[0-9]{6,}-[A-Za-z0-9-]{8,}|xapp-[0-9]-[A-Z0-9]{8,}-[0-9]{6,}-[a-f0-9]{32,})`), triggers: []string{"xox", "xapp-"}},
		{kind: "slack-webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{16,}`), triggers: []string{"hooks.slack.com"}},
		{kind: "stripe-key", re: regexp.MustCompile(`(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{32,})`), triggers: []string{"_live_", "_test_", "whsec_"}, valid: randomBody(0)},
		{kind: "jwt", re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), triggers: []string{"eyJ"}},
		{kind: "npm-token", re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}\b`), triggers: []string{"npm_"}, valid: randomBody(4)},
		// A PyPI token is a macaroon: its base64 begins with "pypi.org" (or
		// "test.pypi.org") encoded.
		{kind: "pypi-token", re: regexp.MustCompile(`pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}`), triggers: []string{"pypi-AgE"}},
		{kind: "twilio-api-key", re: regexp.MustCompile(`\bSK[0-9a-f]{32}\b`), triggers: []string{"SK"}, valid: randomBody(2)},
		{kind: "sendgrid-api-key", re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`), triggers: []string{"SG."}},
		{kind: "mailgun-api-key", re: regexp.MustCompile(`\bkey-[0-9a-f]{32}\b`), triggers: []string{"key-"}, valid: randomBody(4)},
		{kind: "digitalocean-token", re: regexp.MustCompile(`do[por]_v1_[a-f0-9]{64}\b`), triggers: []string{"_v1_"}},
		{kind: "heroku-api-key", re: regexp.MustCompile(`HRKU-[A-Za-z0-9_-]{40,}`), triggers: []string{"HRKU-"}, valid: randomBody(5)},
		{kind: "azure-storage-key", re: regexp.MustCompile(`(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})`), group: 1, triggers: []string{"AccountKey=", "SharedAccessKey="}},
		{kind: "vault-token", re: regexp.MustCompile(`\bhv[sbr]\.[A-Za-z0-9_-]{24,}`), triggers: []string{"hvs.", "hvb.", "hvr."}, valid: randomBody(4)},
		{kind: "dockerhub-token", re: regexp.MustCompile(`dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`), triggers: []string{"dckr_"}, valid: randomBody(9)},
		{kind: "shopify-token", re: regexp.MustCompile(`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`), triggers: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, valid: randomBody(6)},
		{kind: "square-token", re: regexp.MustCompile(`\b(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43})`), triggers: []string{"EAAA", "sq0atp-", "sq0csp-"}, valid: randomBody(4)},
		{kind: "databricks-token", re: regexp.MustCompile(`\bdapi[a-f0-9]{32}(?:-[0-9]+)?\b`), triggers: []string{"dapi"}, valid: randomBody(4)},
		{kind: "huggingface-token", re: regexp.MustCompile(`\bhf_[A-Za-z]{34}\b`), triggers: []string{"hf_"}, valid: randomBody(3)},
		{kind: "age-secret-key", re: regexp.MustCompile(`AGE-SECRET-KEY-1[0-9A-Z]{58}\b`), triggers: []string{"AGE-SECRET-KEY-"}},
		{kind: "url-credentials", re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@"']+:([^\s@/"']+)@`), group: 1, triggers: []string{"://"}, valid: notPlaceholder},
		// An Authorization header's credentials, whatever their format.
		// In an OTLP header list (OTEL_EXPORTER_OTLP_HEADERS) the space is
		// written %20.
		{kind: "authorization-header", re: regexp.MustCompile(`(?i:authorization)["']?\s*[=:]\s*["']?(?i:basic|bearer|token)(?:\s+|%20)([A-Za-z0-9+/=._~-]{16,})`), group: 1, triggers: []string{"authorization"}, fold: true, valid: headerValue},
		// The headers telemetry vendors take an API key in, as an HTTP
		// header (x-honeycomb-team: KEY) or in an OTLP header list
		// (x-honeycomb-team=KEY,...).
		{kind: "api-key-header", re: regexp.MustCompile(`(?i:` + apiKeyHeaders + `)["']?\s*[=:]\s*["']?([A-Za-z0-9+/=._~%-]{8,512})`), group: 1, triggers: apiKeyHeaderTriggers, fold: true, valid: headerValue},
		// The OTLP exporter's header list, whatever headers it holds.
		{kind: "otlp-headers", re: regexp.MustCompile(`OTEL_EXPORTER_OTLP_(?:TRACES_|METRICS_|LOGS_)?HEADERS["']?\s*[=:]\s*["']?([^\s"'=,]+=[^\s"']+)`), group: 1, triggers: []string{"OTEL_EXPORTER_OTLP_"}, valid: notPlaceholder},
		// NAME=value, NAME: value, export NAME='value', and "name": "value".
		// A quoted value is redacted to its closing quote. A quoted name takes
		// only a quoted value, as JSON has it: `"secret": file not found` in
		// a message is prose about a path, not an assignment. The value must
		// look like a secret literal (see secretValue): a name that says
		// secret is followed as often by an expression or by prose.
		{kind: "secret-assignment", re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])(?:` + secretName + assignOp +
			`(?:"([^"\n]{6,512})"|'([^'\n]{6,512})'|` + bareValue + `)|["']` + secretName +
			`["']` + assignOp + `(?:"([^"\n]{6,512})"|'([^'\n]{6,512})'))`), group: anyGroup, triggers: []string{"token", "secret", "password", "passwd", "api_key", "apikey", "private_key", "credentials", "access_key"}, fold: true, valid: secretValue},
	}
})
