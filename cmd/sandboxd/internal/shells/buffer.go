package shells

import (
	"bytes"
	"strings"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
)

// maxHold bounds a partial line held back waiting for its end, as
// scrub.Stream does: a line longer than that is released in pieces.
const maxHold = 64 << 10

// releaser turns output arriving in pieces into text that may be shown:
// *scrub.Stream scrubs it, lineHold passes it as it is. Both release
// whole lines only until Flush.
type releaser interface {
	Write(p string) string
	Flush() string
}

// newReleaser is a background stream's releaser: scrubbing, and
// counting what it redacts, when the Manager has a Scrubber.
func (m *Manager) newReleaser() releaser {
	if m.opts.Scrubber == nil {
		return &lineHold{}
	}
	return m.scrubStream()
}

// scrubStream is a scrub.Stream that reports its redactions to
// Options.OnRedact.
func (m *Manager) scrubStream() releaser {
	st := m.opts.Scrubber.NewStream()
	if m.opts.OnRedact == nil {
		return st
	}
	return &counted{rel: st, report: m.opts.OnRedact}
}

// redactionMark starts every redaction shared/scrub writes.
const redactionMark = "[REDACTED:"

// counted reports the redactions rel makes: the marks in what it
// releases beyond those in what it was given. (A mark written in two
// pieces is not seen going in, so it counts as a redaction.)
type counted struct {
	rel      releaser
	report   func(int)
	in, out  int
	reported int
}

func (c *counted) Write(p string) string {
	c.in += strings.Count(p, redactionMark)
	return c.note(c.rel.Write(p))
}

func (c *counted) Flush() string { return c.note(c.rel.Flush()) }

func (c *counted) note(released string) string {
	c.out += strings.Count(released, redactionMark)
	if n := c.out - c.in - c.reported; n > 0 {
		c.reported += n
		c.report(n)
	}
	return released
}

// lineHold releases complete lines, so background output reads and
// filters the same with or without a scrubber.
type lineHold struct{ held string }

func (l *lineHold) Write(p string) string {
	l.held += p
	cut := strings.LastIndexByte(l.held, '\n') + 1
	if cut == 0 {
		if len(l.held) <= maxHold {
			return ""
		}
		cut = len(l.held)
	}
	out := l.held[:cut]
	l.held = l.held[cut:]
	return out
}

func (l *lineHold) Flush() string {
	out := l.held
	l.held = ""
	return out
}

// capture is a foreground stream's sink: scrubbed (when there is a
// scrubber) on the way into a head-and-tail buffer, until detach hands
// the stream over to a background shell.
type capture struct {
	mu  sync.Mutex // Write against detach
	rel releaser   // nil: no scrubbing, bytes go straight in
	ht  *headTail
	to  *pending // set by detach: where the stream goes from then on
}

func (m *Manager) newCapture() *capture {
	c := &capture{ht: newHeadTail(m.opts.MaxOutput)}
	if m.opts.Scrubber != nil {
		c.rel = m.scrubStream()
	}
	return c
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.to != nil {
		return c.to.Write(p)
	}
	if c.rel == nil {
		return c.ht.Write(p)
	}
	_, _ = c.ht.Write([]byte(c.rel.Write(string(p))))
	return len(p), nil
}

// detach returns what the stream released so far and sends the rest to
// p, through the same releaser: a line cut at the handover reaches the
// scrubber whole, and shows in p once it ends.
func (c *capture) detach(p *pending) clip {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.rel = c.rel
	if p.rel == nil {
		p.rel = &lineHold{}
	}
	c.to = p
	return c.ht.clip()
}

// finish releases what the scrubber still holds; call after Wait, and
// never after detach.
func (c *capture) finish() clip {
	if c.rel != nil {
		_, _ = c.ht.Write([]byte(c.rel.Flush()))
	}
	return c.ht.clip()
}

// pending is a background stream's output not read yet. Writes come from
// the process's reader goroutine, reads from Output; mu (the shell's) is
// held for both. At most limit bytes wait: older ones are dropped, from
// a line start where possible, and counted for the next read.
type pending struct {
	mu      *sync.Mutex
	rel     releaser
	limit   int
	buf     []byte
	start   int // buf[:start] is dropped and awaits compaction
	dropped int
	// watcher, when set, sees every write (the process is not idle) and
	// the text released, scrubbed, as stream; it sees all of it, read or
	// dropped.
	watcher *watch.Watcher
	stream  string
}

func (p *pending) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watcher != nil {
		p.watcher.Activity()
	}
	p.add(p.rel.Write(string(b)))
	return len(b), nil
}

// flush releases the partial line the process ended on; mu must be held.
func (p *pending) flush() { p.add(p.rel.Flush()) }

func (p *pending) add(s string) {
	if s == "" {
		return
	}
	if p.watcher != nil {
		p.watcher.Output(p.stream, s)
	}
	p.buf = append(p.buf, s...)
	excess := len(p.buf) - p.start - p.limit
	if excess <= 0 {
		return
	}
	cut := p.start + excess
	if p.buf[cut-1] != '\n' {
		// Start the kept text on a whole line, unless that keeps nothing.
		if i := bytes.IndexByte(p.buf[cut:], '\n'); i >= 0 && cut+i+1 < len(p.buf) {
			cut += i + 1
		}
	}
	p.dropped += cut - p.start
	p.start = cut
	// Compacting only once the dead prefix outgrows the limit keeps a
	// flood from copying the whole buffer on every write.
	if p.start > p.limit {
		n := copy(p.buf, p.buf[p.start:])
		p.buf = p.buf[:n]
		p.start = 0
	}
}

// take returns the unread text and how many bytes were dropped before
// it, and empties the buffer; mu must be held.
func (p *pending) take() (string, int) {
	text, dropped := string(p.buf[p.start:]), p.dropped
	p.buf, p.start, p.dropped = p.buf[:0], 0, 0
	if cap(p.buf) > maxHold {
		p.buf = nil // a burst should not pin its buffer for the shell's life
	}
	return text, dropped
}
