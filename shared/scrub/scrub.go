package scrub

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
)

// Scrubber redacts registered secret values and well-known credential
// formats. It is safe for concurrent use once built.
type Scrubber struct {
	values []value // longest first, so a value inside another goes second
}

type value struct {
	text, kind string
}

// minValueLen is the shortest value registered: shorter ones ("1", "on")
// would redact ordinary text.
const minValueLen = 4

// New returns a scrubber for the given secret values, keyed by a name
// (the environment variable it came from) that the redaction shows.
// Values shorter than 4 bytes are ignored.
func New(secrets map[string]string) *Scrubber {
	s := &Scrubber{}
	seen := map[string]bool{}
	add := func(text, kind string) {
		if len(text) >= minValueLen && !seen[text] {
			seen[text] = true
			s.values = append(s.values, value{text, kind})
		}
	}
	names := make([]string, 0, len(secrets))
	for name := range secrets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := secrets[name]
		if len(v) < minValueLen {
			continue
		}
		kind := "secret:" + name
		for _, part := range append([]string{v}, headerValues(name, v)...) {
			add(part, kind)
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				add(enc.EncodeToString([]byte(part)), kind+":base64")
			}
			add(url.QueryEscape(part), kind+":url")
			add(url.PathEscape(part), kind+":url")
		}
	}
	sort.SliceStable(s.values, func(i, j int) bool { return len(s.values[i].text) > len(s.values[j].text) })
	return s
}

// String returns text with every secret replaced by [REDACTED:kind].
func (s *Scrubber) String(text string) string {
	for _, v := range s.values {
		if strings.Contains(text, v.text) {
			text = strings.ReplaceAll(text, v.text, redaction(v.kind))
		}
	}
	hits := triggerHits(text)
	for i, p := range patterns() {
		lines := linesOf(text, hits, i)
		if lines == nil {
			continue
		}
		var out string
		if p.multiline {
			out = replace(text, p)
		} else {
			out = replaceLines(text, lines, p)
		}
		if out != text {
			text = out
			hits = triggerHits(text) // the offsets have moved
		}
	}
	return text
}

// span is a range of text, [start, end).
type span struct{ start, end int }

// linesOf returns the lines of text that hold a trigger of pattern pat,
// in order, without their newlines; nil when none does.
func linesOf(text string, hits []hit, pat int) []span {
	var lines []span
	for _, h := range hits {
		if h.pat != pat || len(lines) > 0 && h.pos < lines[len(lines)-1].end {
			continue
		}
		start := strings.LastIndexByte(text[:h.pos], '\n') + 1
		end := len(text)
		if j := strings.IndexByte(text[h.pos:], '\n'); j >= 0 {
			end = h.pos + j
		}
		lines = append(lines, span{start, end})
	}
	return lines
}

// replaceLines runs p on each of the given lines of text.
func replaceLines(text string, lines []span, p pattern) string {
	// Most lines with a trigger hold no secret: the text is copied only
	// from the first line that changes.
	var b strings.Builder
	last, changed := 0, false
	for _, l := range lines {
		line := text[l.start:l.end]
		r := replace(line, p) // line itself when nothing matched
		if !changed {
			if r == line {
				continue
			}
			changed = true
			b.Grow(len(text))
		}
		b.WriteString(text[last:l.start])
		b.WriteString(r)
		last = l.end
	}
	if !changed {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those
// of s (strings.ToLower may change a string's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Bytes is String for a byte slice.
func (s *Scrubber) Bytes(b []byte) []byte { return []byte(s.String(string(b))) }

func redaction(kind string) string { return "[REDACTED:" + kind + "]" }

// replace redacts p's matches (or their group) in text.
func replace(text string, p pattern) string {
	locs := p.re.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		start, end := loc[0], loc[1]
		group := 0
		switch {
		case p.group > 0:
			group = p.group
			start, end = loc[2*p.group], loc[2*p.group+1]
		case p.group == anyGroup:
			for g := 1; 2*g < len(loc); g++ {
				if loc[2*g] >= 0 {
					group = g
					start, end = loc[2*g], loc[2*g+1]
					break
				}
			}
		}
		if start < last || start < 0 {
			continue
		}
		if p.valid != nil && !p.valid(text[start:end], group) {
			continue // shaped like the format, but not a secret
		}
		if insideRedaction(text, start) {
			continue // already redacted, by a value or an earlier format
		}
		b.WriteString(text[last:start])
		b.WriteString(redaction(p.kind))
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// insideRedaction reports whether position i of text lies in a
// [REDACTED:...] marker: its words are not a secret to redact again.
func insideRedaction(text string, i int) bool {
	open := strings.LastIndex(text[:min(i+len("[REDACTED:"), len(text))], "[REDACTED:")
	if open < 0 {
		return false
	}
	end := strings.IndexByte(text[open:], ']')
	return end >= 0 && open+end >= i
}

// headerValues are the parts of a secret that is a header list, as
// OTEL_EXPORTER_OTLP_HEADERS holds (NAME=VALUE,... with values
// URL-encoded), that may be printed alone: the value of each header
// whose name says it holds a credential (or that looks random, 16 bytes
// or more: a dataset's name must not be redacted from all output),
// encoded and decoded, and the credentials after an auth scheme (Bearer
// KEY). Only a secret whose name ends in HEADERS is read so.
func headerValues(name, v string) []string {
	if !strings.HasSuffix(strings.ToUpper(name), "HEADERS") {
		return nil
	}
	var out []string
	for _, pair := range strings.Split(v, ",") {
		header, val, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		dec, err := url.PathUnescape(val)
		if err != nil {
			dec = val
		}
		if !credentialHeader(header) && !headerValue(dec, 0) {
			continue
		}
		out = append(out, val, dec)
		if _, cred, ok := strings.Cut(dec, " "); ok {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	return out
}

// credentialHeader says whether an HTTP header's name says it carries a
// credential.
func credentialHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, w := range []string{"auth", "key", "token", "secret", "pass", "x-honeycomb-team"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
