// Package scrubtest holds credentials shaped like the real thing and
// valid for nothing, for the tests of everything that must redact them,
// and ordinary code and prose that nothing may redact.
package scrubtest

import (
	"embed"
	"path"
	"sort"
	"strings"
)

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

// Credentials has every format the scrubber knows, with values of the
// real length and alphabet (random, and valid for nothing). Prefixes are
// written apart so that secret scanners leave this file alone. The
// truncated private key is last: it is redacted to the end of the text,
// as the rest of a key cut short is unknown.
var Credentials = []Credential{
	{"aws-access-key-id", "AKIA" + "X44S0O2A0QPOASTV", "aws_access_key_id = %s"},
	{"aws-access-key-id", "ASIA" + "JTBOQBJB33SOTXQ0", "key %s in use"},
	{"secret-assignment", "lS+2wLfKkaVE/tNMO66iv9b4/b8p6k+csDZVefZO", "aws_secret_access_key = %s"},
	{"github-token", "ghp_" + "EGQ80YRP10eougTfIhpazOc61hVRd82Wzj5O", "token: %s"},
	{"github-token", "gho_" + "SqplLapHp6hgPjryAczD4UDDqcdbTmBQq79G", "%s"},
	{"github-token", "ghu_" + "ygZnhAOgshDBj1zpi4i4zBGozlxQF0l3AnQB", "(%s)"},
	{"github-token", "ghs_" + "2bFtKsh2eWYtVFpIPEnLCGiFJfWOQgUQudDf", "remote: %s"},
	{"github-token", "ghr_" + "ZFUWdGvIkgTxzszeomDnTaOaovzMNndr5Oby", "refresh=%s;"},
	{"github-token", "github_pat_" + "OdjQ9IS8onGY2O2IQ0OUV8_6rGbNNZZGnELEwiTDVT6lgmbf7xUsP0P9gjcl7NSWShU8WownKBfl7fDf4c", "pat %s end"},
	{"gitlab-token", "glpat-" + "ttuA1fToZ0HpXyT4V3cS", "PRIVATE-TOKEN: %s"},
	{"anthropic-api-key", "sk-ant-api03-" + "A3nI3EPj26FVJUO4lFRbFl4MTuVlXR_qtmVZLyeQLGuSNNr23WaINK5V_MQOMg7v_T1BciR8cIe--UWFMZOWIQIBjzSNwAA", "x-api-key: %s"},
	{"openai-api-key", "sk-proj-" + "3taBrdmzEZJb6hPNOQFEfKsGPSpFk_gMFIYtKhSWbBTkPRU2NFoylq2xqzuB7FAsT3BlbkFJ2KemDVLDhnblmuseX3UNDuwRSY1EM0tSn1W-TsWF23xz3iW0nbF7OT6ixKkmVRJh", "Bearer %s"},
	{"openai-api-key", "sk-" + "HjSpIpblckqoxFcFi11pT3BlbkFJuEA8OxUvpsAPa7A4a09n", "OPENAI %s"},
	{"google-api-key", "AIza" + "nb1L-VVzz1uXNkN-y5hNF4hXhpQjyzW55o7", "url?key=%s&q=1"},
	{"slack-token", "xoxb-" + "332272372548-524993571476-A4YdLnAXUQJvcHzwbPjAp9uk", "slack %s"},
	{"slack-token", "xoxp-" + "161866520166-144565146512-541815138753-e140569d01304a29e4d9d241989ea28c", "user token %s"},
	{"slack-webhook", "https://hooks.slack.com/services/" + "TT4BHHVZR/B2SNRA4AMF0/j9Lo7vAKXgV1r41YWaukxALs", "post to %s now"},
	{"stripe-key", "sk_live_" + "xWnkPmZUHcIfraTbJg2V1rmg", "stripe %s"},
	{"stripe-key", "sk_test_" + "hFFwba4eTqRA3hvAMEy7pMmt", "Stripe.api_key = '%s'"},
	{"stripe-key", "rk_live_" + "koQllyV9w9ejbPnWj7WZOAfS", "%s"},
	{"stripe-key", "whsec_" + "q8806s4BvSYuY8zmvpDbIbwbCIAGA6Lf", "endpoint secret %s"},
	{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "Authorization: Bearer %s"},
	{"npm-token", "npm_" + "hbWW2ZTfwNwrU22XhFqf3pXBn6jFdcsV2OKb", "//registry.npmjs.org/:_authToken=%s"},
	{"pypi-token", "pypi-AgEIcHlwaS5vcmc" + "vaumxXYrUntkbjegb7Xb4Va5BpoBeYIivaMIkUbagzArE36G4WK6NawEO5GHrWnn_71vUFYvlIVv95hNUx9S46gCaKGRF", "password = %s"},
	{"twilio-api-key", "SK" + "66a3b70770d8666bae47e559b563dafa", "twilio key %s"},
	{"sendgrid-api-key", "SG." + "V0TOw5j59lKAtpIAi6hoEa.N2rc-gmMX3JdsTzNlPm1fHt4P34Z2UP2YwLC-zyNUI6", "sendgrid %s"},
	{"mailgun-api-key", "key-" + "f2c799e2f8bf19ecd25e31b6e720554f", "api:%s"},
	{"digitalocean-token", "dop_v1_" + "d88032121b53e4e49201c8999dde290c5ff0ce20151c072e0b870fd542bfdfb3", "doctl auth init -t %s"},
	{"heroku-api-key", "HRKU-" + "ek1JhSEhi3rzATTUC-097ljWH1MbCqlj0BPzEdSBHhrwEgHJVwFd-JgG7T29", "heroku %s"},
	{"azure-storage-key", "ipJcoi6B3dKqW5R+fz4hcn2UCvhv81vZgEOiJydxHDAjz0d5qtIovW+3Cl3YIuMe43/V4hiccQpI410tkC/i5A==", "DefaultEndpointsProtocol=https;AccountName=billing;AccountKey=%s;EndpointSuffix=core.windows.net"},
	{"vault-token", "hvs." + "CAESI0EiFQA6WLHpDVFeVmEbcvMCuGh4KHGh2cy5xZ2JTRTRqc0x2", "VAULT_TOKEN %s"},
	{"dockerhub-token", "dckr_pat_" + "TNqcdCQEkU6HojQc4P4h8KLtb-1", "docker login -u ci -p %s"},
	{"secret-assignment", "NjU3MTk4OTg2NDIwMTc5ODI5.X7Vgfa.SUVQnkHW8ggm_t-8_EQ1GA06RUi2a0PywXND5I", "DISCORD_BOT_TOKEN=%s"},
	{"shopify-token", "shpat_" + "6a3180e95e48ebaef64c07011a911cab", "X-Shopify-Access-Token: %s"},
	{"square-token", "EAAA" + "7uI1zBPBZ3hLxEYLMe2QmjzkGnLhcnB0i964f3jOJd0pS0yrVFSsbO97lRzg", "square %s"},
	{"square-token", "sq0csp-" + "Bn6ojdj6iHFjO_lcg4xhAofSfx6jY3LnwwiXqGOsbXX", "oauth secret %s"},
	{"databricks-token", "dapi" + "db17e304b01d2b57c713688bc46835ee", "DATABRICKS_HOST=x %s"},
	{"huggingface-token", "hf_" + "RYUlyyTfwlCYhtygovgbyRGrhMlatRpIry", "huggingface-cli login --token %s"},
	{"age-secret-key", "AGE-SECRET-KEY-1" + "OZBC53FM0OOIPZ5A5SPY9J3Y0LP4ZLU2CFIU3V8ZC7863YXXFV75E5JU8P", "# key: %s"},
	{"authorization-header", "YmlsbGluZzpRUGZieDdKOHJrSGhvbndl", "Authorization: Basic %s"},
	{"pem-private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1\nabc+/=\n-----END RSA PRIVATE KEY-----", "key:\n%s\ndone"},
	{"pem-private-key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oVZ5rZ5Y5n5YoAoGCCqGSM49\n-----END EC PRIVATE KEY-----", "%s"},
	{"pem-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "%s"},
	{"url-credentials", "s3cretpass", "postgres://app:%s@db:5432/app"},
	{"url-credentials", "sQgYybVYHuCAUe", "git clone https://ci:%s@gitlab.example.com/x/y.git"},
	{"secret-assignment", "tok-12345-abcdef", "GITHUB_TOKEN=%s"},
	{"secret-assignment", "QPfbx7J8rkHhonwe", "DB_PASSWORD=%s"},
	{"secret-assignment", "Xk2#mQ9!vL4$", `"client_secret": "%s"`},
	{"secret-assignment", "hunter2-Prod-2024", `self.password = "%s"`},
	{"secret-assignment", "c0rrect-h0rse", `export DB_PASSWORD='%s'`},
	{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B", "truncated: %s"},
}

//go:embed testdata/ordinary
var ordinary embed.FS

// Ordinary returns files of ordinary code and prose (Go, Python,
// TypeScript, YAML, Markdown, CSS, shell) full of the words and prefixes
// secrets have, none of which is one, by name.
func Ordinary() map[string]string {
	entries, err := ordinary.ReadDir("testdata/ordinary")
	if err != nil {
		panic(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := ordinary.ReadFile(path.Join("testdata/ordinary", e.Name()))
		if err != nil {
			panic(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// OrdinaryLines returns the non-blank lines of Ordinary's files, in a
// fixed order.
func OrdinaryLines() []string {
	files := Ordinary()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var lines []string
	for _, name := range names {
		for line := range strings.SplitSeq(files[name], "\n") {
			if strings.TrimSpace(line) != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines
}
