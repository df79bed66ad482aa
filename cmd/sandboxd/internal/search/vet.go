package search

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

// Grep must not be an oracle for what the scrubber hides. rg matches the
// real file, so a pattern run against a secret ("ghp_a", "ghp_b", ...)
// would tell by its count whether the secret starts so, one character at
// a time, though every result is scrubbed. Dropping only the matches that
// overlap a secret is not enough: whether a match overlaps can itself
// depend on the secret ("TOKEN(=ghp_a)?" matches "TOKEN" alone unless
// the secret starts with "a"), and a match's end can depend on text
// beyond it. So the unit is the line: without multiline, whether a line
// matches depends on that line alone, and a line holding (part of) a
// secret never counts as a match, whatever the pattern. It may still be
// shown as context of a line that does match, scrubbed like all output.
// With multiline a match can reach anywhere in its file, so a file that
// holds a secret is not reported at all. What is left of the answer is a
// function of secret-free text only.
//
// Which lines hold a secret is what the scrubber says: the file is read
// in windows and scrubbed, and the scrubbed text is aligned with the
// original to find what was replaced (lineVetter).

// Vetting windows: a file is scrubbed vetWindow bytes at a time, each
// window cut after its last newline when it has one, and each seeing
// vetLookahead bytes past its cut so that a secret across the cut is
// seen whole. A secret that spans lines and runs past that too (a
// private key block of more than 64 KiB) makes every line after its
// start count as secret, as the scrubber itself redacts an unterminated
// key block to the end.
const (
	vetWindow    = 1 << 20
	vetLookahead = 64 << 10
)

// maxMarker bounds a [REDACTED:kind] marker looked for in scrubbed text.
const maxMarker = 256

const markerOpen = "[REDACTED:"

// lineVetter says which lines of one file hold something the scrubber
// redacts. Lines are asked about in increasing order; the file is read
// once, window by window, as far as the questions go.
type lineVetter struct {
	sc      *scrub.Scrubber
	r       io.Reader
	buf     []byte // unread window: buf[0] is at the start of line `line` or within it
	line    int    // line number of buf[0]
	eof     bool
	decided int // lines up to this one are fully scanned
	marked  map[int]bool
	restAt  int // every line from this one on holds a secret; 0: none
	err     error
	// sizeHint is the file's size when it was opened, 0 if not known.
	sizeHint int
}

func newLineVetter(sc *scrub.Scrubber, r io.Reader, sizeHint int64) *lineVetter {
	return &lineVetter{sc: sc, r: r, line: 1, marked: map[int]bool{}, sizeHint: int(min(sizeHint, vetWindow+vetLookahead))}
}

// secret reports whether line n (1-based) holds part of a secret. When
// the file cannot be read to that line, it says yes.
func (v *lineVetter) secret(n int) bool {
	for v.decided < n && v.err == nil {
		v.advance()
	}
	if v.err != nil && v.decided < n {
		return true
	}
	return v.marked[n] || v.restAt > 0 && n >= v.restAt
}

// any reports whether the file holds a secret anywhere.
func (v *lineVetter) any() bool {
	for v.err == nil && !(v.eof && len(v.buf) == 0) {
		if len(v.marked) > 0 || v.restAt > 0 {
			return true
		}
		v.advance()
	}
	return v.err != nil || len(v.marked) > 0 || v.restAt > 0
}

// advance scans the next window.
func (v *lineVetter) advance() {
	if v.eof && len(v.buf) == 0 {
		v.decided = int(^uint(0) >> 1)
		return
	}
	want := vetWindow + vetLookahead
	for !v.eof && len(v.buf) < want {
		if len(v.buf) == cap(v.buf) {
			// Most files are far smaller than a window: the buffer
			// starts at the size the file had when opened.
			nb := make([]byte, len(v.buf), min(want, max(2*cap(v.buf), v.sizeHint+1, 4<<10)))
			copy(nb, v.buf)
			v.buf = nb
		}
		n, err := v.r.Read(v.buf[len(v.buf):cap(v.buf)])
		v.buf = v.buf[:len(v.buf)+n]
		if errors.Is(err, io.EOF) {
			v.eof = true
		} else if err != nil {
			v.err = err
			return
		}
	}
	region := v.buf
	end := len(region) // where this window's own part ends
	final := v.eof
	if !final || len(region) > vetWindow {
		final = false
		if i := bytes.LastIndexByte(region[:vetWindow], '\n'); i >= 0 {
			end = i + 1
		} else {
			end = vetWindow
		}
	}
	v.vet(region, end, final)

	// Lines that end within the window's own part are decided; a line
	// cut by it goes on in the next window.
	nl := bytes.Count(region[:end], []byte{'\n'})
	if end == len(region) && final {
		v.decided = int(^uint(0) >> 1)
	} else {
		v.decided = v.line + nl - 1
	}
	for k := range v.marked {
		if k < v.line {
			delete(v.marked, k)
		}
	}
	v.line += nl
	rest := copy(v.buf, v.buf[end:])
	v.buf = v.buf[:rest]
}

// vet marks the lines of region (which starts on line v.line) that hold
// a redaction starting before end. final says region ends the file.
func (v *lineVetter) vet(region []byte, end int, final bool) {
	if len(region) == 0 {
		return
	}
	// The scrubber keeps no reference to its argument, and region is not
	// changed until the result is dropped: no copy is needed.
	// #nosec G103 -- a view of region without a copy; the scrubber keeps no reference and region is unchanged while text is used (see above)
	text := unsafe.String(&region[0], len(region))
	out := v.sc.String(text)
	if out == text {
		return
	}
	line, at := v.line, 0
	lineOf := func(pos int) int {
		line += strings.Count(text[at:pos], "\n")
		at = pos
		return line
	}
	for _, sp := range redactedSpans(text, out) {
		if sp[0] >= end {
			break // the next window sees it from its start
		}
		first := lineOf(sp[0])
		last := first + strings.Count(text[sp[0]:max(sp[0], sp[1]-1)], "\n")
		for l := first; l <= last; l++ {
			v.marked[l] = true
		}
		if sp[1] >= len(region) && !final && strings.Contains(text[sp[0]:sp[1]], "\n") {
			// A block across lines that may go on past what was read.
			if v.restAt == 0 || first < v.restAt {
				v.restAt = first
			}
		}
	}
}

// redactedSpans finds the byte ranges of text that the scrubber replaced
// to make out. out is text with some disjoint ranges each replaced by a
// [REDACTED:kind] marker; the pieces of out between markers are text's
// own bytes. Matching the pieces against text as early as possible and
// as late as possible bounds each replaced range from both sides, so
// every range returned holds the one replaced, however the pieces repeat.
// A marker that text itself holds at exactly that place (a file quoting
// a redaction) is not a secret. Should the alignment fail, all of text is
// returned.
func redactedSpans(text, out string) [][2]int {
	all := [][2]int{{0, len(text)}}
	type marker struct{ start, end int }
	var ms []marker
	for i := 0; ; {
		j := strings.Index(out[i:], markerOpen)
		if j < 0 {
			break
		}
		s := i + j
		k := strings.IndexByte(out[s+len(markerOpen):min(len(out), s+maxMarker)], ']')
		if k < 0 {
			i = s + len(markerOpen)
			continue
		}
		e := s + len(markerOpen) + k + 1
		ms = append(ms, marker{s, e})
		i = e
	}
	if len(ms) == 0 {
		return all
	}
	piece := func(i int) string { // piece i sits before marker i; the last after the last
		from := 0
		if i > 0 {
			from = ms[i-1].end
		}
		to := len(out)
		if i < len(ms) {
			to = ms[i].start
		}
		return out[from:to]
	}
	n := len(ms)
	last := piece(n)
	if !strings.HasPrefix(text, piece(0)) || !strings.HasSuffix(text, last) {
		return all
	}
	// early[i]: the earliest end of piece i; late[i]: the latest start.
	early := make([]int, n+1)
	late := make([]int, n+1)
	early[0] = len(piece(0))
	for i := 1; i < n; i++ {
		from := early[i-1] + 1
		if from > len(text) {
			return all
		}
		j := strings.Index(text[from:], piece(i))
		if j < 0 {
			return all
		}
		early[i] = from + j + len(piece(i))
	}
	late[n] = len(text) - len(last)
	for i := n - 1; i >= 1; i-- {
		to := late[i+1] - 1
		if to < 0 {
			return all
		}
		j := strings.LastIndex(text[:to], piece(i))
		if j < 0 {
			return all
		}
		late[i] = j
	}
	spans := make([][2]int, 0, n)
	for i := 1; i <= n; i++ {
		a, b := early[i-1], late[i]
		if a > b {
			return all
		}
		if text[a:b] == out[ms[i-1].start:ms[i-1].end] {
			continue // the text quotes a marker; nothing was replaced here
		}
		spans = append(spans, [2]int{a, b})
	}
	return spans
}
