package scrub

import "strings"

// maxHold bounds what a Stream holds back waiting for the end of a line
// or of a PEM block; past it the text is scrubbed and released as it is.
const maxHold = 64 << 10

// Stream scrubs text that arrives in pieces (a background shell's
// output). Write adds a piece and returns what can be released, scrubbed;
// Flush releases the rest at the end.
type Stream struct {
	s    *Scrubber
	held string
}

// NewStream returns a stream scrubbed by s.
func (s *Scrubber) NewStream() *Stream { return &Stream{s: s} }

// Write adds p and returns the scrubbed text complete so far: up to the
// last newline, not inside a PEM private key block.
func (st *Stream) Write(p string) string {
	st.held += p
	cut := strings.LastIndexByte(st.held, '\n') + 1
	if begin := strings.LastIndex(st.held[:cut], "-----BEGIN "); begin >= 0 &&
		!strings.Contains(st.held[begin:cut], "-----END ") {
		cut = begin // a key block still open: keep all of it
	}
	if cut == 0 && len(st.held) <= maxHold {
		return ""
	}
	if len(st.held) > maxHold && cut == 0 {
		cut = len(st.held)
	}
	out := st.s.String(st.held[:cut])
	st.held = st.held[cut:]
	return out
}

// Flush returns whatever is still held, scrubbed.
func (st *Stream) Flush() string {
	out := st.s.String(st.held)
	st.held = ""
	return out
}
