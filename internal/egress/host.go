package egress

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// normalHost lower-cases a host name and drops one trailing dot, so
// "API.GitHub.com." and "api.github.com" are the same host. IPv6
// brackets are removed: "[::1]" is "::1".
func normalHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return h
}

// splitRuleHost splits a rule's host into its name and port (0 when
// none is given): "name", "name:port", "*.suffix", "*.suffix:port",
// "1.2.3.4", "[::1]:443" or a bare "::1".
func splitRuleHost(s string) (string, int, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", 0, fmt.Errorf("is empty")
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		return checkName(s)
	case strings.HasPrefix(s, "["), strings.Count(s, ":") == 1:
		name, port, err := net.SplitHostPort(s)
		if err != nil {
			return "", 0, fmt.Errorf("%q is not host or host:port", s)
		}
		p, err := parsePort(port)
		if err != nil {
			return "", 0, fmt.Errorf("%q: %w", s, err)
		}
		n, _, err := checkName(name)
		return n, p, err
	default: // a name, or a bare IPv6 address
		return checkName(s)
	}
}

// parsePort parses a TCP port, 1 to 65535.
func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return p, nil
}

// checkName validates a rule's host without its port and returns it
// normalised.
func checkName(s string) (string, int, error) {
	n := normalHost(s)
	if net.ParseIP(n) != nil {
		return n, 0, nil
	}
	name := n
	if strings.HasPrefix(n, "*.") {
		name = n[2:]
	}
	if !validDNSName(name) {
		if n == "*" || strings.Contains(name, "*") {
			return "", 0, fmt.Errorf("%q: a wildcard is only \"*.\" before a domain name", s)
		}
		return "", 0, fmt.Errorf("%q is not a DNS name or an IP address", s)
	}
	return n, 0, nil
}

// validDNSName reports whether name is a DNS name: labels of letters,
// digits, '-' and '_', 1 to 63 bytes each, 253 in all, not starting or
// ending with '-'.
func validDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// splitTarget splits the host:port of a CONNECT request or of an
// absolute URL, with defPort when it has none (0: a port is required).
func splitTarget(hostport string, defPort int) (string, int, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		if defPort == 0 || strings.Count(hostport, ":") == 1 && !strings.HasSuffix(hostport, "]") {
			return "", 0, fmt.Errorf("%q is not host:port", hostport)
		}
		host, port = hostport, strconv.Itoa(defPort)
	}
	p, err := parsePort(port)
	if err != nil {
		return "", 0, err
	}
	host = normalHost(host)
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host", hostport)
	}
	return host, p, nil
}

// joinHostPort is net.JoinHostPort with an int port.
func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
