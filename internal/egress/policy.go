package egress

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Rule allows one host (or every host under a domain) through the
// proxy, and may carry a credential for it.
type Rule struct {
	// Host is a DNS name, "*.suffix" (any name under suffix, not
	// suffix itself) or an IP address, lower-case, without a trailing
	// dot or IPv6 brackets.
	Host string
	// Port is the one port allowed; 0 allows 80 and 443.
	Port int
	// Secret names the credential the proxy adds as header Header,
	// written as Format with its one %s replaced by the secret's value.
	// All three are empty for a rule without a credential.
	Secret, Header, Format string
}

// String is the rule's host as the policy wrote it: "name" or
// "name:port".
func (r Rule) String() string {
	if r.Port == 0 {
		return r.Host
	}
	return joinHostPort(r.Host, r.Port)
}

// Value is the header value the rule adds for the secret's value.
func (r Rule) Value(secret string) string {
	return strings.Replace(r.Format, "%s", secret, 1)
}

// knownKeys are a rule's keys, in the order error messages list them.
var knownKeys = []string{"format", "header", "host", "secret"}

// ParseRules reads egress rules from a decoded YAML or JSON value: a list
// of maps with the keys host (required), secret, header and format, all
// strings. host is "name", "name:port", "*.suffix" or "*.suffix:port";
// without a port the rule allows 80 and 443. An IP address is allowed as
// a host too ("10.0.0.7:3128", "[::1]:8080"): it is matched only when
// the sandbox names that address, never a name that resolves to it.
// secret and header go together; format defaults to "%s" and must hold
// exactly one %s. A nil value is no rules: nothing is allowed.
func ParseRules(raw any) ([]Rule, error) {
	if raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		if maps, isMaps := raw.([]map[string]any); isMaps {
			for _, m := range maps {
				list = append(list, m)
			}
		} else {
			return nil, fmt.Errorf("egress: want a list of rules, got %s", typeName(raw))
		}
	}
	rules := make([]Rule, 0, len(list))
	seen := map[string]int{}
	for i, item := range list {
		r, err := parseRule(item)
		if err != nil {
			return nil, fmt.Errorf("egress rule %d: %w", i, err)
		}
		if j, dup := seen[r.String()]; dup {
			return nil, fmt.Errorf("egress rule %d: host: %s is already rule %d", i, r, j)
		}
		seen[r.String()] = i
		rules = append(rules, r)
	}
	return rules, nil
}

// parseRule reads one rule from a map.
func parseRule(item any) (Rule, error) {
	m, err := stringKeys(item)
	if err != nil {
		return Rule{}, err
	}
	fields := map[string]string{}
	for k, v := range m {
		if !isKnownKey(k) {
			return Rule{}, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(knownKeys, ", "))
		}
		s, ok := v.(string)
		if !ok {
			return Rule{}, fmt.Errorf("%s: want a string, got %s", k, typeName(v))
		}
		fields[k] = s
	}
	var r Rule
	if _, ok := fields["host"]; !ok {
		return Rule{}, fmt.Errorf("host: missing")
	}
	if r.Host, r.Port, err = splitRuleHost(fields["host"]); err != nil {
		return Rule{}, fmt.Errorf("host: %w", err)
	}
	r.Secret, r.Header = strings.TrimSpace(fields["secret"]), strings.TrimSpace(fields["header"])
	format, hasFormat := fields["format"]
	switch {
	case r.Secret != "" && r.Header == "":
		return Rule{}, fmt.Errorf("header: missing: secret %s needs a header to go in", r.Secret)
	case r.Header != "" && r.Secret == "":
		return Rule{}, fmt.Errorf("secret: missing: header %s needs a secret", r.Header)
	case r.Secret == "" && hasFormat:
		return Rule{}, fmt.Errorf("format: set without a secret")
	case r.Secret == "":
		return r, nil
	}
	if strings.ContainsFunc(r.Secret, func(c rune) bool { return c <= ' ' || c == '=' }) {
		return Rule{}, fmt.Errorf("secret: %q is not a secret's name", r.Secret)
	}
	r.Header = http.CanonicalHeaderKey(r.Header)
	if !validToken(r.Header) {
		return Rule{}, fmt.Errorf("header: %q is not an HTTP header name", r.Header)
	}
	if hopByHop[r.Header] || r.Header == "Host" || r.Header == "Content-Length" {
		return Rule{}, fmt.Errorf("header: %s is not one a credential may go in", r.Header)
	}
	r.Format = "%s"
	if hasFormat {
		r.Format = format
	}
	if n := strings.Count(r.Format, "%s"); n != 1 {
		return Rule{}, fmt.Errorf("format: %q holds %d %%s, want exactly 1", r.Format, n)
	}
	if strings.ContainsAny(r.Format, "\r\n") {
		return Rule{}, fmt.Errorf("format: %q holds a line break", r.Format)
	}
	return r, nil
}

// stringKeys returns item as a map with string keys: YAML decoders give
// map[string]any or map[any]any.
func stringKeys(item any) (map[string]any, error) {
	switch m := item.(type) {
	case map[string]any:
		return m, nil
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			s, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v: want a string, got %s", k, typeName(k))
			}
			out[s] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a map with a host, got %s", typeName(item))
}

func isKnownKey(k string) bool {
	i := sort.SearchStrings(knownKeys, k)
	return i < len(knownKeys) && knownKeys[i] == k
}

// typeName names a decoded value's type the way a config author knows it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

// validToken reports whether s is an HTTP token (RFC 9110 5.6.2).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// Allowed returns the rule that lets the sandbox reach host:port, and
// whether there is one. Host is matched case-insensitively, a trailing
// dot ignored. When several rules match, the most specific wins: an exact
// name before a wildcard, a longer wildcard before a shorter, a rule with
// the port before one without. Nothing is allowed that no rule names.
func Allowed(rules []Rule, host string, port int) (Rule, bool) {
	host = normalHost(host)
	best, bestScore := Rule{}, -1
	for _, r := range rules {
		if r.Port != 0 && r.Port != port || r.Port == 0 && port != 80 && port != 443 {
			continue
		}
		score := 0
		switch {
		case r.Host == host:
			score = 1 << 10
		case strings.HasPrefix(r.Host, "*.") && strings.HasSuffix(host, r.Host[1:]) && len(host) > len(r.Host)-1:
			score = len(r.Host)
		default:
			continue
		}
		score *= 2
		if r.Port != 0 {
			score++
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	return best, bestScore >= 0
}

// describe lists the rules' hosts for a refusal: "a, b:443", or "none".
func describe(rules []Rule) string {
	if len(rules) == 0 {
		return "none"
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}
