package scrub

import (
	"math"
	"strings"
)

// The judges here decide whether what a pattern matched is a secret or
// only shaped like the start of one. Code and prose are full of names
// that say secret (token = strings.TrimSpace(token), self.password =
// password, "# Password: must be...") and of prefixes that keys use too
// (a CSS class sk-fading-circle): redacting them would corrupt what the
// agent reads and, through Write, the files it writes back.

// charClasses reports which of upper-case letters, lower-case letters,
// digits and other characters s holds.
func charClasses(s string) (upper, lower, digit, other bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	return
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// entropy is the Shannon entropy of s's bytes, in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	h := 0.0
	for _, n := range freq {
		if n > 0 {
			p := float64(n) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// randomBody judges a token of a prefixed format: past its first skip
// bytes (the prefix) it must mix at least two of upper-case letters,
// lower-case letters and digits, as generated keys do and words, CSS
// classes and identifiers in one case do not.
func randomBody(skip int) func(string, int) bool {
	return func(v string, _ int) bool {
		if len(v) < skip {
			return false
		}
		upper, lower, digit, _ := charClasses(v[skip:])
		return count(upper, lower, digit) >= 2
	}
}

// placeholders are values that stand for a secret in examples and
// templates rather than being one.
var placeholders = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true,
	"token": true, "changeme": true, "placeholder": true, "redacted": true,
}

// isTemplate reports whether v is a reference to a value rather than the
// value: an interpolation, a format verb, a <placeholder>, or a mask.
func isTemplate(v string) bool {
	switch {
	case strings.Contains(v, "${"), strings.Contains(v, "{{"), strings.Contains(v, "#{"),
		strings.Contains(v, "$("), strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%"),
		strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"),
		strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}"),
		strings.Contains(v, "xxxx"), strings.Contains(v, "XXXX"), strings.Contains(v, "****"),
		strings.Contains(v, "..."), strings.Contains(v, "…"), strings.Contains(v, "[REDACTED:"):
		return true
	}
	return placeholders[strings.ToLower(v)] || strings.HasPrefix(strings.ToLower(v), "your")
}

// notPlaceholder judges the password of a URL: anything but a template
// or a placeholder word (https://user:password@host in documentation).
func notPlaceholder(v string, _ int) bool { return !isTemplate(v) }

// bareGroup is the group of the secret-assignment pattern that holds an
// unquoted value.
const bareGroup = 3

// secretValue judges the value of a secret-assignment: bare (group 3)
// or quoted.
func secretValue(v string, group int) bool {
	if group == bareGroup {
		return randomBare(v, group)
	}
	return quotedSecret(v)
}

// randomBare judges an unquoted value, which the pattern has already
// kept from calls, indexes and collections. It must look generated, not
// written: 8 bytes or more, letters mixed with digits or three kinds of
// character, not all one repeated run, and not an identifier, a dotted
// member access, a path, a URL, a number or a template.
func randomBare(v string, _ int) bool {
	if len(v) < 8 || isTemplate(v) || strings.Contains(v, "://") || looksLikePath(v) {
		return false
	}
	c := v[0]
	if !(isAlnum(c) || c == '_' || c == '+' || c == '/') {
		return false // *ptr, &ref, -flag, !not, .field, @decorator
	}
	if isIdentifier(v) && (!hasDigit(v) || strings.Contains(v, "_")) {
		return false // a variable: password, newPassword, api_key_v2
	}
	if strings.Contains(v, ".") && dottedName(v) {
		return false // self.password, settings.API_KEY, db.example.com
	}
	upper, lower, digit, other := charClasses(v)
	letter := upper || lower
	if !letter {
		return false // a number, a date, a version
	}
	if !(digit || count(upper, lower, other) >= 3 && len(v) >= 12) {
		return false // a word or words joined by - or _
	}
	return entropy(v) >= 2.5
}

// headerValue judges the credentials of an Authorization header: what
// follows Basic or Bearer is a value, never an expression, so letters
// alone count when they are random enough (base64 of user:password may
// hold no digit).
func headerValue(v string, g int) bool {
	return randomBare(v, g) || !isTemplate(v) && len(v) >= 16 && entropy(v) >= 4.0
}

// quotedSecret judges a quoted value. Quotes make it a literal, so it
// needs less than a bare one to count, but not prose (a label, a
// message), an empty-looking or masked value, a template, a path or a
// URL.
func quotedSecret(v string) bool {
	t := strings.TrimSpace(v)
	if len(t) < 6 || isTemplate(t) || strings.Contains(t, "://") || looksLikePath(t) {
		return false
	}
	upper, lower, digit, other := charClasses(t)
	if !digit && !hasSymbol(t) {
		// Letters and spaces: a word or a sentence ("Password", "Enter
		// your token"), unless long and mixed like a generated key.
		return !strings.ContainsAny(t, " \t") && upper && lower && len(t) >= 20 && entropy(t) >= 3.5
	}
	if !upper && !lower && !other {
		return len(t) >= 6 // a PIN or a numeric code
	}
	return entropy(t) >= 2.0
}

// hasSymbol reports whether s holds a character that is neither a letter,
// a digit, nor the punctuation and spaces of prose.
func hasSymbol(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && !strings.ContainsRune(" \t.,;:!?'-()", rune(c)) {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func isIdentifier(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// dottedName reports whether s is names joined by dots, none of which
// mixes letters and digits as a generated value does: a member access, a
// module path or a host name.
func dottedName(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; !isAlnum(c) && c != '_' && c != '-' {
				return false
			}
		}
		upper, lower, digit, _ := charClasses(part)
		if digit && (upper || lower) {
			return false
		}
	}
	return true
}

// looksLikePath reports whether s names a file: /abs, ./rel, ../up, ~/home.
func looksLikePath(s string) bool {
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
