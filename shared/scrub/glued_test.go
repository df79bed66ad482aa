package scrub

import (
	"strings"
	"testing"
)

// TestGluedTokens: a token of a format with a distinctive prefix is
// found when letters run into it (issue 28: aaaaghp_...); formats whose
// prefix words share still start at a word boundary.
func TestGluedTokens(t *testing.T) {
	s := New(nil)
	const gh = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
	for in, want := range map[string]string{
		"aaaa" + gh:                        "aaaa[REDACTED:github-token]",
		"token" + gh + " end":              "token[REDACTED:github-token] end",
		"x" + "glpat-Ab3dE5fG7hI9jK1lM3nO": "x[REDACTED:gitlab-token]",
		"key" + "sk-ant-api03-" + strings.Repeat("aB3d", 10): "key[REDACTED:anthropic-api-key]",
		"pre" + "npm_" + gh[4:]:                              "pre[REDACTED:npm-token]",
		// Word-boundary formats stay so: base64 and words hold these.
		"XAKIAIOSFODNN7EXAMPLE":                 "XAKIAIOSFODNN7EXAMPLE",
		"task-0123456789abcdef0123456789abcdef": "task-0123456789abcdef0123456789abcdef",
	} {
		if got := s.String(in); got != want {
			t.Errorf("\n in  %q\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestOTLPHeaders: the OTLP exporter's header list, printed whole, one
// header at a time, or its values alone, is redacted; a header that
// holds no credential is left.
func TestOTLPHeaders(t *testing.T) {
	s := New(nil)
	for in, want := range map[string]string{
		"x-honeycomb-team=Ab12Cd34Ef56Gh78Ij90":                          "x-honeycomb-team=[REDACTED:api-key-header]",
		"x-honeycomb-team=Ab12Cd34Ef56Gh78Ij90,x-honeycomb-dataset=prod": "x-honeycomb-team=[REDACTED:api-key-header],x-honeycomb-dataset=prod",
		"Authorization=Bearer%20abc123def456ghi789jkl":                   "Authorization=Bearer%20[REDACTED:authorization-header]",
		"Authorization=Bearer abc123def456ghi789":                        "Authorization=Bearer [REDACTED:authorization-header]",
		"dd-api-key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0":                   "dd-api-key: [REDACTED:api-key-header]",
		"OTEL_EXPORTER_OTLP_HEADERS=x-custom-auth=q8Zr2Lm5Xv7Tn4Wp":      "OTEL_EXPORTER_OTLP_HEADERS=[REDACTED:otlp-headers]",
		"export OTEL_EXPORTER_OTLP_TRACES_HEADERS='a=b1c2d3e4'":          "export OTEL_EXPORTER_OTLP_TRACES_HEADERS='[REDACTED:otlp-headers]'",
		// Not credentials.
		"api-key: ${API_KEY}": "api-key: ${API_KEY}",
		"x-api-key=required":  "x-api-key=required",
		`headers := os.Getenv("OTEL_EXPORTER_OTLP_HEADERS")`: `headers := os.Getenv("OTEL_EXPORTER_OTLP_HEADERS")`,
		"OTEL_EXPORTER_OTLP_HEADERS=${HEADERS}":              "OTEL_EXPORTER_OTLP_HEADERS=${HEADERS}",
	} {
		if got := s.String(in); got != want {
			t.Errorf("\n in  %q\n got %q\nwant %q", in, got, want)
		}
	}

	// Registered, as sandboxd registers the exporter's headers: each
	// credential's value printed alone is redacted, short or encoded,
	// and a header that holds none (a dataset's name) is not.
	reg := New(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc123,x-honeycomb-team=KEY9z,x-honeycomb-dataset=prod"})
	for in, want := range map[string]string{
		"abc123":        "[REDACTED:secret:OTEL_EXPORTER_OTLP_HEADERS]",
		"Bearer abc123": "[REDACTED:secret:OTEL_EXPORTER_OTLP_HEADERS]",
		"key is KEY9z.": "key is [REDACTED:secret:OTEL_EXPORTER_OTLP_HEADERS].",
		"dataset prod":  "dataset prod",
	} {
		if got := reg.String(in); got != want {
			t.Errorf("registered:\n in  %q\n got %q\nwant %q", in, got, want)
		}
	}
}
