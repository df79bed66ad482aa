package verify

import (
	"bytes"
	"sync"
)

// maxLine bounds one line of tool output. go test -json puts a test's
// whole unbroken output line into one event, so it has to be generous;
// a longer line is cut, which its parser then sees as garbage.
const maxLine = 1 << 20

// lineWriter splits what is written to it into lines for a handler,
// holding at most maxLine bytes of an unfinished line.
type lineWriter struct {
	handle func(line []byte)
	buf    []byte
	over   bool // the current line passed maxLine; drop until its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLine - len(w.buf); len(chunk) > room {
			chunk, w.over = chunk[:room], true
		}
		w.buf = append(w.buf, chunk...)
		if i < 0 {
			break
		}
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

// flush hands over a last line that had no newline.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 || w.over {
		w.emit()
	}
}

func (w *lineWriter) emit() {
	w.handle(bytes.TrimSuffix(w.buf, []byte("\r")))
	w.buf, w.over = w.buf[:0], false
	if cap(w.buf) > 64<<10 {
		// One huge line must not pin its buffer for the rest of the run.
		w.buf = nil
	}
}

// tail keeps the last bytes written to it, for a failure no parser could
// explain.
type tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) add(line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(line)) + 1
	t.buf = append(t.buf, line...)
	t.buf = append(t.buf, '\n')
	// Compacting only once twice the tail is held keeps a line's cost
	// constant: go test -json prints a line per event, and shifting the
	// whole tail for each made a long run quadratic in its tail.
	if len(t.buf) >= 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
}

// kept is the last max bytes held.
func (t *tail) kept() []byte {
	if over := len(t.buf) - t.max; over > 0 {
		return t.buf[over:]
	}
	return t.buf
}

// String is the kept tail, starting at a line boundary when one is near.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.kept()
	if int64(len(s)) < t.total {
		if i := bytes.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return string(bytes.ToValidUTF8(s, []byte("\uFFFD")))
}
