package scrub

import "strings"

// maxHold bounds what a Stream holds back waiting for the end of a line
// or of a PEM block; past it the text is scrubbed and released in
// pieces, cut where no secret is cut in two.
const maxHold = 64 << 10

// cutWindow is how much of a long line a Stream keeps back past a cut,
// beyond its longest registered value: more than any known format's
// secret, so one that begins before the cut is whole in what is judged.
const cutWindow = 4 << 10

// cutTries bounds the places a Stream tries for a cut in a long line.
const cutTries = 16

// Stream scrubs text that arrives in pieces (a background shell's
// output). Write adds a piece and returns what can be released, scrubbed;
// Flush releases the rest at the end.
type Stream struct {
	s    *Scrubber
	held string
	// cont is the kind of a secret that a forced cut may have split:
	// the run of secret characters the held text starts with is its
	// rest, and is redacted too.
	cont string
}

// NewStream returns a stream scrubbed by s.
func (s *Scrubber) NewStream() *Stream { return &Stream{s: s} }

// Write adds p and returns the scrubbed text complete so far: up to the
// last newline, not inside a PEM private key block. A line longer than
// 64 KiB is released in pieces, each cut where scrubbing the two sides
// apart gives what scrubbing them together gives, so a secret across a
// cut is redacted whole.
func (st *Stream) Write(p string) string {
	st.held += p
	cut := strings.LastIndexByte(st.held, '\n') + 1
	if begin := strings.LastIndex(st.held[:cut], "-----BEGIN "); begin >= 0 &&
		!strings.Contains(st.held[begin:cut], "-----END ") {
		cut = begin // a key block still open: keep all of it
	}
	if cut == 0 {
		if len(st.held) <= maxHold {
			return ""
		}
		return st.releaseLong()
	}
	return st.release(cut)
}

// release scrubs and returns held[:cut], keeping the rest.
func (st *Stream) release(cut int) string {
	text := st.held[:cut]
	st.held = st.held[cut:]
	prefix := ""
	if st.cont != "" {
		n := secretRun(text)
		prefix, text = redaction(st.cont), text[n:]
		st.cont = ""
	}
	return prefix + st.s.String(text)
}

// releaseLong releases the start of a held line over maxHold, keeping
// back at least cutWindow and the longest registered value.
func (st *Stream) releaseLong() string {
	keep := cutWindow
	if len(st.s.values) > 0 {
		keep += len(st.s.values[0].text) // longest first
	}
	limit := len(st.held) - keep
	if limit <= 0 {
		return ""
	}
	if st.cont == "" {
		whole := st.s.String(st.held)
		c := limit
		for range cutTries {
			c = lastSeparator(st.held[:c])
			if c <= 0 {
				break
			}
			left := st.s.String(st.held[:c])
			if strings.HasPrefix(whole, left) && whole[len(left):] == st.s.String(st.held[c:]) {
				st.held = st.held[c:]
				return left
			}
			c-- // before that separator
		}
	}
	// No cut found that splits no secret: a line of one long run, such
	// as base64. Cut it anyway, redacting from where a secret may begin
	// at the cut, and the rest of it after.
	out := st.release(limit)
	if cutOut, kind := st.s.cutEnd(out); kind != "" {
		out, st.cont = cutOut, kind
	}
	return out
}

// lastSeparator returns the offset just past the last byte of text that
// no known format's secret holds, or 0.
func lastSeparator(text string) int {
	for i := len(text) - 1; i >= 0; i-- {
		if isSeparator(text[i]) {
			return i + 1
		}
	}
	return 0
}

func isSeparator(c byte) bool {
	return c <= ' ' || strings.IndexByte("\"'`,;()[]{}<>|", c) >= 0
}

// secretRun is the length of the run of non-separator bytes text
// begins with.
func secretRun(text string) int {
	for i := 0; i < len(text); i++ {
		if isSeparator(text[i]) {
			return i
		}
	}
	return len(text)
}

// Flush returns whatever is still held, scrubbed.
func (st *Stream) Flush() string { return st.release(len(st.held)) }
