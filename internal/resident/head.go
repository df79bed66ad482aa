package resident

import (
	"bytes"
	"sync"
)

// HeadBuffer keeps the first Max bytes written to it and drops the rest:
// what a resident's exec printed before failing (the runtime's "exec
// format error", a shell's "not found") is the start of its streams.
type HeadBuffer struct {
	Max int

	mu  sync.Mutex
	buf bytes.Buffer
}

func (h *HeadBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.Max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *HeadBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}
