package egress

import (
	"testing"
)

func TestParseRules(t *testing.T) {
	raw := []any{
		map[string]any{"host": "Proxy.Golang.org."},
		map[string]any{"host": "api.github.com:443", "secret": "GITHUB_TOKEN", "header": "authorization", "format": "Bearer %s"},
		map[any]any{"host": "*.pypi.org"},
		map[string]any{"host": "[::1]:8080"},
		map[string]any{"host": "10.0.0.7"},
		map[string]any{"host": "key.example", "secret": "KEY", "header": "X-Api-Key"},
	}
	got, err := ParseRules(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Host: "proxy.golang.org"},
		{Host: "api.github.com", Port: 443, Secret: "GITHUB_TOKEN", Header: "Authorization", Format: "Bearer %s"},
		{Host: "*.pypi.org"},
		{Host: "::1", Port: 8080},
		{Host: "10.0.0.7"},
		{Host: "key.example", Secret: "KEY", Header: "X-Api-Key", Format: "%s"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rules, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := describe(got); s != "proxy.golang.org, api.github.com:443, *.pypi.org, [::1]:8080, 10.0.0.7, key.example" {
		t.Errorf("describe = %q", s)
	}
	if rules, err := ParseRules(nil); err != nil || rules != nil {
		t.Errorf("ParseRules(nil) = %v, %v; want nothing", rules, err)
	}
}

func TestParseRulesErrors(t *testing.T) {
	for _, tc := range []struct {
		raw  any
		want string
	}{
		{map[string]any{"host": "a.example"}, "egress: want a list of rules, got a map"},
		{[]any{"a.example"}, "egress rule 0: want a map with a host, got a string"},
		{[]any{map[string]any{"host": "a.example"}, map[string]any{"hots": "b.example"}},
			`egress rule 1: unknown key "hots" (known: format, header, host, secret)`},
		{[]any{map[string]any{"secret": "T", "header": "Authorization"}}, "egress rule 0: host: missing"},
		{[]any{map[string]any{"host": ""}}, "egress rule 0: host: is empty"},
		{[]any{map[string]any{"host": 443}}, "egress rule 0: host: want a string, got a number"},
		{[]any{map[string]any{"host": "*"}}, `egress rule 0: host: "*": a wildcard is only "*." before a domain name`},
		{[]any{map[string]any{"host": "a.*.example"}}, `egress rule 0: host: "a.*.example": a wildcard is only "*." before a domain name`},
		{[]any{map[string]any{"host": "bad host"}}, `egress rule 0: host: "bad host" is not a DNS name or an IP address`},
		{[]any{map[string]any{"host": "a.example:0"}}, `egress rule 0: host: "a.example:0": port "0" is not a number from 1 to 65535`},
		{[]any{map[string]any{"host": "a.example:https"}}, `egress rule 0: host: "a.example:https": port "https" is not a number from 1 to 65535`},
		{[]any{map[string]any{"host": "a.example", "secret": "TOKEN"}},
			"egress rule 0: header: missing: secret TOKEN needs a header to go in"},
		{[]any{map[string]any{"host": "a.example", "header": "Authorization"}},
			"egress rule 0: secret: missing: header Authorization needs a secret"},
		{[]any{map[string]any{"host": "a.example", "format": "Bearer %s"}}, "egress rule 0: format: set without a secret"},
		{[]any{map[string]any{"host": "a.example", "secret": "T", "header": "Authorization", "format": "Bearer"}},
			`egress rule 0: format: "Bearer" holds 0 %s, want exactly 1`},
		{[]any{map[string]any{"host": "a.example", "secret": "T", "header": "Authorization", "format": "%s:%s"}},
			`egress rule 0: format: "%s:%s" holds 2 %s, want exactly 1`},
		{[]any{map[string]any{"host": "a.example", "secret": "T", "header": "Bad Header"}},
			`egress rule 0: header: "Bad Header" is not an HTTP header name`},
		{[]any{map[string]any{"host": "a.example", "secret": "T", "header": "proxy-authorization"}},
			"egress rule 0: header: Proxy-Authorization is not one a credential may go in"},
		{[]any{map[string]any{"host": "a.example", "secret": "T", "header": "Host"}},
			"egress rule 0: header: Host is not one a credential may go in"},
		{[]any{map[string]any{"host": "a.example:443"}, map[string]any{"host": "A.example.:443"}},
			"egress rule 1: host: a.example:443 is already rule 0"},
	} {
		_, err := ParseRules(tc.raw)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseRules(%v) = %v\nwant %s", tc.raw, err, tc.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	rules := []Rule{
		{Host: "proxy.golang.org"},
		{Host: "*.example.com"},
		{Host: "api.example.com", Port: 443, Secret: "T", Header: "Authorization", Format: "%s"},
		{Host: "*.deep.example.com", Port: 8443},
		{Host: "::1", Port: 8080},
	}
	for _, tc := range []struct {
		host string
		port int
		want string // the rule's String, "" when refused
	}{
		{"proxy.golang.org", 443, "proxy.golang.org"},
		{"PROXY.golang.org.", 80, "proxy.golang.org"},
		{"proxy.golang.org", 8080, ""},
		{"golang.org", 443, ""},
		{"evilproxy.golang.org", 443, ""},
		{"example.com", 443, ""},
		{"www.example.com", 80, "*.example.com"},
		{"a.b.example.com", 443, "*.example.com"},
		{"api.example.com", 443, "api.example.com:443"},
		{"api.example.com", 80, "*.example.com"},
		{"x.deep.example.com", 8443, "*.deep.example.com:8443"},
		{"x.deep.example.com", 443, "*.example.com"},
		{"notexample.com", 443, ""},
		{"[::1]", 8080, "[::1]:8080"},
		{"::1", 8081, ""},
		{"", 443, ""},
	} {
		r, ok := Allowed(rules, tc.host, tc.port)
		got := ""
		if ok {
			got = r.String()
		}
		if got != tc.want {
			t.Errorf("Allowed(%q, %d) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
	if _, ok := Allowed(nil, "proxy.golang.org", 443); ok {
		t.Error("no rules allowed a host")
	}
}
