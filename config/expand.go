package config

import (
	"fmt"
	"strings"
)

// expandIssue is one ${...} reference that could not be expanded.
type expandIssue struct {
	kind issueKind
	text string // the variable name, or the malformed reference
}

type issueKind int

const (
	issueUnset issueKind = iota
	issueUnterminated
	issueEmptyName
	issueBadName
)

// message words the issue for a value found under key (a path such as
// "pod" or "mounts[0]").
func (e expandIssue) message(key string) string {
	switch e.kind {
	case issueUnset:
		return fmt.Sprintf("environment variable %s is not set (used in key %q)", e.text, key)
	case issueUnterminated:
		return fmt.Sprintf("unterminated \"${\" in key %q (write \"$${\" for a literal \"${\")", key)
	case issueEmptyName:
		return fmt.Sprintf("empty variable name \"${}\" in key %q", key)
	}
	return fmt.Sprintf("invalid variable name %q in key %q (use letters, digits and underscores, not starting with a digit)", e.text, key)
}

// expand replaces each ${NAME} in s with the value lookup gives NAME and
// each "$${" with a literal "${". Everything else, including a lone "$",
// is kept. It reports every reference it could not expand.
func expand(s string, lookup func(string) (string, bool)) (string, []expandIssue) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var issues []expandIssue
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), issues
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			issues = append(issues, expandIssue{kind: issueUnterminated, text: s[i:]})
			b.WriteString(s[i:])
			return b.String(), issues
		}
		name := s[i+2 : i+2+end]
		s = s[i+3+end:]
		switch {
		case name == "":
			issues = append(issues, expandIssue{kind: issueEmptyName})
		case !validName(name):
			issues = append(issues, expandIssue{kind: issueBadName, text: name})
		default:
			v, ok := lookup(name)
			if !ok {
				issues = append(issues, expandIssue{kind: issueUnset, text: name})
			}
			b.WriteString(v)
		}
	}
}

// validName reports whether name is a portable environment variable name:
// letters, digits and underscores, not starting with a digit.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
