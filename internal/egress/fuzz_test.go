package egress

import "testing"

// FuzzTargets feeds arbitrary hosts to the rule parser and to the
// target parsing and matching the proxy does on the sandbox's input:
// none may panic, and a rule that parses must allow its own host.
func FuzzTargets(f *testing.F) {
	for _, s := range []string{"example.com", "a.example:443", "*.example.com:8443", "[::1]:80", "::1", "1.2.3.4", "", ":", "[", "*", "a..b", "[::1", "x:99999"} {
		f.Add(s)
	}
	rules := []Rule{{Host: "*.example.com"}, {Host: "example.com", Port: 443}, {Host: "::1", Port: 80}}
	f.Fuzz(func(t *testing.T, s string) {
		if host, port, err := splitTarget(s, 80); err == nil {
			Allowed(rules, host, port)
		}
		_, _, _ = splitTarget(s, 0)
		got, err := ParseRules([]any{map[string]any{"host": s}})
		if err != nil {
			return
		}
		r := got[0]
		port := r.Port
		if port == 0 {
			port = 443
		}
		host := r.Host
		if len(host) > 2 && host[:2] == "*." {
			host = "x" + host[1:]
		}
		if _, ok := Allowed(got, host, port); !ok {
			t.Errorf("rule %q (%+v) does not allow %s:%d", s, r, host, port)
		}
	})
}
