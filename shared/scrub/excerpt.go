package scrub

import (
	"strings"
	"unicode/utf8"
)

// excerptMargin is how far past an excerpt's cut Excerpt reads, so that
// a secret straddling the cut is seen whole and redacted as itself. Past
// it the text is not read at all: the formats run at 1–2 MB/s on lines
// full of their triggers, and an excerpt of megabytes of output must not
// take seconds.
const excerptMargin = 4 << 10

// maxMarker bounds the length of a [REDACTED:kind] marker that Excerpt
// will recognise, so a hook printing "[REDACTED:" and a far-away "]"
// cannot make it treat a whole paragraph as one marker.
const maxMarker = 256

// Excerpt returns the start of text, scrubbed and cut to at most n bytes,
// and whether it left anything out.
//
// Text is scrubbed before it is cut, so a secret that straddles the cut
// is redacted whole instead of half shown. The cut falls on a rune
// boundary and never inside a [REDACTED:kind] marker: a marker the cut
// would split is left out with the rest.
//
// Only the first n+4 KiB of text are read. When that is not all of it,
// or when cutShort says text is itself only the start of longer output
// (stopped at a size limit), the end of what is read may hold the start
// of a secret, which no pattern can tell from ordinary text. It is
// redacted to the end: a tail of 4 bytes or more that begins a registered
// value (shorter ones would redact ordinary text, as for whole values),
// and the last line from the first literal trigger of a known format,
// such as "sk-" or "password".
func (s *Scrubber) Excerpt(text string, n int, cutShort bool) (excerpt string, cut bool) {
	n = max(n, 0)
	if limit := n + excerptMargin; len(text) > limit {
		for limit > 0 && !utf8.RuneStart(text[limit]) {
			limit--
		}
		text, cutShort, cut = text[:limit], true, true
	}
	out := s.String(text)
	if cutShort {
		out = s.redactCutEnd(out)
	}
	if len(out) <= n {
		return out, cut
	}
	end := n
	for end > 0 && !utf8.RuneStart(out[end]) {
		end--
	}
	if open := markerAt(out, end); open >= 0 {
		end = open
	}
	return out[:end], true
}

// redactCutEnd redacts, in scrubbed text that was cut short, what may be
// the start of a secret at its end: see Excerpt.
func (s *Scrubber) redactCutEnd(text string) string {
	out, _ := s.cutEnd(text)
	return out
}

// cutEnd is redactCutEnd, and says the kind of secret it redacted, if
// any.
func (s *Scrubber) cutEnd(text string) (string, string) {
	from, kind := len(text), ""
	for _, v := range s.values {
		// The longest tail that is a proper prefix of v: a whole v has
		// been redacted already.
		for i := max(0, len(text)-len(v.text)+1); i <= len(text)-minValueLen && i < from; i++ {
			if strings.HasPrefix(v.text, text[i:]) && !insideRedaction(text, i) {
				from, kind = i, v.kind
				break
			}
		}
	}
	// Every format but a PEM key (already redacted to the end when cut
	// short) lies on one line, so one cut short begins on the last.
	line := strings.LastIndexByte(text, '\n') + 1
	last := text[line:]
	lower := asciiLower(last)
	for _, p := range patterns() {
		if p.multiline {
			continue
		}
		hay := last
		if p.fold {
			hay = lower
		}
		for _, t := range p.triggers {
			if at := firstOutsideRedactions(text, hay, line, t); at >= 0 && at < from {
				from, kind = at, p.kind
			}
		}
	}
	if kind == "" {
		return text, ""
	}
	return text[:from] + redaction(kind), kind
}

// firstOutsideRedactions returns the offset in text of the first t in
// hay (text[base:], perhaps lower-cased) that is not part of a
// [REDACTED:kind] marker, or -1.
func firstOutsideRedactions(text, hay string, base int, t string) int {
	for from := 0; ; {
		i := strings.Index(hay[from:], t)
		if i < 0 {
			return -1
		}
		if at := base + from + i; !insideRedaction(text, at) {
			return at
		}
		from += i + 1
	}
}

// markerAt returns where the [REDACTED:kind] marker that position i of
// text falls strictly inside begins, or -1 when i is not inside one.
func markerAt(text string, i int) int {
	const open = "[REDACTED:"
	// Any "[REDACTED:" found in this range begins before i.
	start := strings.LastIndex(text[:min(i+len(open)-1, len(text))], open)
	if start < 0 {
		return -1
	}
	rest := text[start+len(open) : min(start+maxMarker, len(text))]
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c == ']':
			if start+len(open)+j >= i {
				return start
			}
			return -1
		case c == '[' || c <= ' ':
			return -1 // not a marker: kinds have no spaces or brackets
		}
	}
	// No "]" within reach. Every marker this package writes has one, but
	// a kind could be long; cutting before the opening shows less, never
	// more.
	return start
}

// Window scrubs text that may be only the start of longer text, as when
// cutShort says so it is: a secret cut short at its end is redacted from
// its start, as Excerpt does. A caller that cuts the result should cut
// it with SafeCut.
func (s *Scrubber) Window(text string, cutShort bool) string {
	out := s.String(text)
	if cutShort {
		out = s.redactCutEnd(out)
	}
	return out
}

// SafeCut returns where to cut scrubbed text at or before byte i so that
// no [REDACTED:kind] marker is split: i, or the start of the marker i
// falls inside.
func SafeCut(text string, i int) int {
	if i >= len(text) {
		return len(text)
	}
	if open := markerAt(text, i); open >= 0 {
		return open
	}
	return i
}
