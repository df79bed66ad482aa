package warmpool

import (
	"io"
	"sync"
)

// Held is one output stream of a prepared item: what is written to it is
// kept (up to its limit) until a call claims it, and then passed straight
// to the call's writer. A container started ahead of its call may print
// before the call comes; an exec session's runtime may say something
// before its wrapper runs.
type Held struct {
	limit int

	mu        sync.Mutex
	w         io.Writer
	held      []byte
	truncated bool
	dropped   bool
}

// NewHeld returns a Held that keeps at most limit bytes before its claim.
func NewHeld(limit int) *Held { return &Held{limit: limit} }

func (h *Held) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dropped {
		return len(p), nil
	}
	if h.w != nil {
		return h.w.Write(p)
	}
	keep := p
	if room := h.limit - len(h.held); len(keep) > room {
		keep = keep[:max(room, 0)]
		h.truncated = true
	}
	h.held = append(h.held, keep...)
	return len(p), nil
}

// Text is what is kept, before a claim.
func (h *Held) Text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.held)
}

// Claim sends what was kept to w, and everything written after it.
func (h *Held) Claim(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) > 0 {
		_, _ = w.Write(h.held)
	}
	if h.truncated {
		// held is full: one more byte makes the call's own cap (the same
		// limit) record the truncation, and is dropped by it.
		_, _ = w.Write([]byte{0})
	}
	h.w, h.held = w, nil
}

// Drop discards everything written from now on: what comes after is not
// the call's.
func (h *Held) Drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropped = true
}
