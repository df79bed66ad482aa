package shell

import (
	"io"
	"sync"
)

const (
	// firstChunk is the first allocation for a stream: a typical hook
	// verdict fits, and a silent stderr costs little.
	firstChunk = 512
	// discardChunk is the scratch size once the cap is reached: one pipe
	// buffer, so a flood is drained in few reads.
	discardChunk = 64 << 10
)

// Output collects one stream up to a byte limit. Bytes past the limit are
// still consumed, so the writer never blocks on a full pipe, but they are
// dropped and Truncated reports it. Memory never exceeds the limit plus a
// fixed scratch buffer.
//
// One goroutine writes (ReadFrom or Write, not both at once); Bytes,
// Since, Len and Truncated may be called from any goroutine meanwhile,
// which is how a background shell's output is read while it runs.
type Output struct {
	limit int

	mu        sync.Mutex
	buf       []byte // published prefix; the writer fills cap beyond len
	truncated bool
}

// NewOutput returns an Output that keeps at most limit bytes (at least 1;
// zero or negative means sandbox.DefaultOutputLimit).
func NewOutput(limit int) *Output {
	if limit <= 0 {
		limit = Options{}.withDefaults().OutputLimit
	}
	return &Output{limit: limit}
}

// ReadFrom reads r until EOF or an error, keeping what fits. It returns
// the number of bytes read, kept or not, and nil at EOF.
func (o *Output) ReadFrom(r io.Reader) (int64, error) {
	o.mu.Lock()
	buf := o.buf
	o.mu.Unlock()
	var total int64
	for len(buf) < o.limit {
		if len(buf) == cap(buf) {
			buf = o.grow(buf)
		}
		// Reading straight into the spare capacity saves a copy; readers
		// of the Output only ever look at the published prefix.
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			total += int64(n)
			o.mu.Lock()
			o.buf = buf
			o.mu.Unlock()
		}
		if err != nil {
			return total, eofIsNil(err)
		}
	}
	n, err := o.discard(r)
	return total + n, err
}

// Write keeps what fits of p and always reports it consumed, so a writer
// feeding several sinks is never stopped by a full one.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	room := o.limit - len(o.buf)
	keep := p
	if len(keep) > room {
		keep = keep[:room]
		o.truncated = true
	}
	if len(keep) > cap(o.buf)-len(o.buf) {
		o.buf = o.growTo(o.buf, len(o.buf)+len(keep))
	}
	o.buf = append(o.buf, keep...)
	return len(p), nil
}

// grow doubles buf's capacity, up to the limit.
func (o *Output) grow(buf []byte) []byte {
	return o.growTo(buf, 2*cap(buf))
}

func (o *Output) growTo(buf []byte, want int) []byte {
	c := min(max(want, firstChunk), o.limit)
	next := make([]byte, len(buf), c)
	copy(next, buf)
	return next
}

func (o *Output) discard(r io.Reader) (int64, error) {
	scratch := make([]byte, discardChunk)
	var total int64
	for {
		n, err := r.Read(scratch)
		if n > 0 {
			total += int64(n)
			o.mu.Lock()
			o.truncated = true
			o.mu.Unlock()
		}
		if err != nil {
			return total, eofIsNil(err)
		}
	}
}

func eofIsNil(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// Bytes returns a copy of what has been kept so far.
func (o *Output) Bytes() []byte { return o.Since(0) }

// Since returns a copy of the kept bytes from offset off on, nil when
// there are none; a background shell remembers Len and asks for what is
// new.
func (o *Output) Since(off int) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if off < 0 {
		off = 0
	}
	if off >= len(o.buf) {
		return nil
	}
	return append([]byte(nil), o.buf[off:]...)
}

// Len is the number of bytes kept so far.
func (o *Output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.buf)
}

// Truncated reports whether bytes past the limit were dropped.
func (o *Output) Truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.truncated
}

// take hands the kept bytes over without a copy; only for when the writer
// is done.
func (o *Output) take() ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf[:len(o.buf):len(o.buf)], o.truncated
}
