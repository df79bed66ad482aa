package shells

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// headTail keeps the first headMax and the last tailMax bytes written to
// it and counts the rest, so a command that prints gigabytes costs no
// more memory than one that prints a page. It is not safe for concurrent
// use; shell.Process writes a sink from one goroutine and never after
// Wait returns, which is when the foreground reads it.
type headTail struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // a ring once full: the oldest byte is at pos
	pos              int
	total            int
}

func newHeadTail(budget int) *headTail {
	h := budget / 2
	return &headTail{headMax: h, tailMax: budget - h}
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += n
	if room := h.headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || h.tailMax == 0 {
		return n, nil
	}
	if h.tail == nil {
		// Allocated only once the head is full: most output never needs it.
		h.tail = make([]byte, 0, h.tailMax)
	}
	if len(p) >= h.tailMax {
		h.tail = append(h.tail[:0], p[len(p)-h.tailMax:]...)
		h.pos = 0
		return n, nil
	}
	if room := h.tailMax - len(h.tail); room > 0 {
		k := min(room, len(p))
		h.tail = append(h.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(h.tail[h.pos:], p)
		p = p[k:]
		h.pos = (h.pos + k) % h.tailMax
	}
	return n, nil
}

func (h *headTail) clip() clip {
	tail := string(h.tail[h.pos:]) + string(h.tail[:h.pos])
	return clip{head: string(h.head), tail: tail, total: h.total}
}

// clip is one stream's text, its middle possibly elided already: total
// counts every byte the stream had.
type clip struct {
	head, tail string
	total      int
}

func textClip(s string) clip { return clip{head: s, total: len(s)} }

// size is how many of the stream's bytes the clip holds.
func (c clip) size() int { return len(c.head) + len(c.tail) }

// render returns at most budget bytes of the clip (plus the note), half
// from the head and half from the tail when both have that much, and
// says how many bytes were left out in between.
func (c clip) render(budget int) string {
	if c.total == c.size() && c.size() > budget && c.tail == "" {
		// Whole text: its tail is the end of the head.
		s := c.head
		c.head, c.tail = s[:len(s)/2], s[len(s)/2:]
	}
	h, t := len(c.head), len(c.tail)
	if h+t > budget {
		h = min(h, budget/2)
		t = min(t, budget-h)
		h = min(len(c.head), budget-t)
	}
	if h+t == c.total {
		return c.head + c.tail
	}
	head := trimPartialRune(c.head[:h])
	tail := c.tail[len(c.tail)-t:]
	// A cut inside a character would hand the agent invalid UTF-8.
	for i := 0; i < utf8.UTFMax && tail != "" && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	var b strings.Builder
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes elided ...]\n", c.total-len(head)-len(tail))
	b.WriteString(tail)
	return b.String()
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of s.
func trimPartialRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// fit splits budget between two clips: each gets what it needs if both
// fit, otherwise the smaller gets up to half and the larger the rest, so
// a short stderr is never crowded out by a flood on stdout.
func fit(a, b clip, budget int) (int, int) {
	sa, sb := a.size(), b.size()
	if sa+sb <= budget {
		return sa, sb
	}
	if sa <= sb {
		x := min(sa, budget/2)
		return x, budget - x
	}
	y := min(sb, budget/2)
	return budget - y, y
}
