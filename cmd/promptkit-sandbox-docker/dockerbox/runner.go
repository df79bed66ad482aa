package dockerbox

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"
)

// A runner is one way of running docker_run containers: the Engine API
// (apiRunner) or the docker CLI (cliRunner). A call is split in two so a
// warm pool can do the slow half ahead of demand: prepare creates and
// starts a container whose process waits for its stdin; finish hands it
// the call.
type runner interface {
	// check runs when the sandbox opens: the engine answers and the
	// image is present locally.
	check(ctx context.Context) error
	// prepare creates and starts a container running spec, attached,
	// its stdin open and nothing written to it yet. What the process
	// writes before finish is kept for the call. Errors are classified
	// (sandbox.Error kinds, ContextError for ctx).
	prepare(ctx context.Context, spec runSpec) (prepared, error)
	// close releases the runner's resources.
	close() error
}

// prepared is a started container waiting for its one call.
type prepared interface {
	// finish writes stdin and closes it, copies the output to out, and
	// waits for the process to exit. It returns the exit code, or an
	// error classified as Spawn's are (ctx is the call's). It does not
	// remove the container: discard does.
	finish(ctx context.Context, stdin []byte, out outputs) (code int, err error)
	// discard kills and removes the container and releases everything
	// the prepared call holds. It is safe to call more than once.
	discard()
}

// runSpec is what a container is made for: everything of a Request but
// its stdin and timeout.
type runSpec struct {
	command string
	args    []string
	env     []string // resolved KEY=value entries
	what    string   // `command "x"`, for errors
	timeout time.Duration
}

// key identifies the specs a pooled container can serve.
func (s runSpec) key() string {
	var b strings.Builder
	for _, part := range [][]string{{s.command}, s.args, s.env} {
		for _, v := range part {
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return b.String()
}

// heldOutput is one output stream of a prepared container: kept (up to
// limit bytes) until the call claims it, then passed straight to the
// call's writer.
type heldOutput struct {
	limit int

	mu        sync.Mutex
	w         io.Writer
	held      []byte
	truncated bool
}

func newHeldOutput(limit int) *heldOutput { return &heldOutput{limit: limit} }

func (h *heldOutput) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
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

// text is what is kept, before a claim.
func (h *heldOutput) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.held)
}

// claim sends what was kept to w, and everything after it.
func (h *heldOutput) claim(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) > 0 {
		_, _ = w.Write(h.held)
	}
	if h.truncated {
		// held is full: one more byte makes the call's own cap (the
		// same limit) record the truncation, and is dropped by it.
		_, _ = w.Write([]byte{0})
	}
	h.w, h.held = w, nil
}
