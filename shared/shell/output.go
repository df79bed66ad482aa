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

	// With a sink, bytes within the limit are passed on as they arrive
	// instead of kept; sent counts them and sinkErr is the first write
	// error, after which the rest is drained and dropped.
	sink    io.Writer
	sent    int
	sinkErr error
}

// NewOutput returns an Output that keeps at most limit bytes (at least 1;
// zero or negative means sandbox.DefaultOutputLimit).
func NewOutput(limit int) *Output {
	if limit <= 0 {
		limit = Options{}.withDefaults().OutputLimit
	}
	return &Output{limit: limit}
}

// NewStreamingOutput returns an Output that passes at most limit bytes on
// to sink as they arrive and keeps none of them: Bytes and Since return
// nothing, Len counts what was passed on.
func NewStreamingOutput(limit int, sink io.Writer) *Output {
	o := NewOutput(limit)
	o.sink = sink
	return o
}

// ReadFrom reads r until EOF or an error, keeping what fits. It returns
// the number of bytes read, kept or not, and nil at EOF.
func (o *Output) ReadFrom(r io.Reader) (int64, error) {
	if o.sink != nil {
		return o.stream(r)
	}
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

// stream is ReadFrom for an Output with a sink. A failing sink does not
// stop the reading: the process must never block on a full pipe.
func (o *Output) stream(r io.Reader) (int64, error) {
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	buf := *bp
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			total += int64(n)
			o.pass(buf[:n])
		}
		if err != nil {
			return total, eofIsNil(err)
		}
	}
}

// pass hands what fits of p to the sink.
func (o *Output) pass(p []byte) {
	o.mu.Lock()
	keep := min(len(p), o.limit-o.sent)
	if keep < len(p) {
		o.truncated = true
	}
	o.sent += keep
	o.mu.Unlock()
	if keep > 0 && o.sinkErr == nil {
		if _, err := o.sink.Write(p[:keep]); err != nil {
			o.sinkErr = err
		}
	}
}

// Write keeps what fits of p and always reports it consumed, so a writer
// feeding several sinks is never stopped by a full one.
func (o *Output) Write(p []byte) (int, error) {
	if o.sink != nil {
		o.pass(p)
		return len(p), nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	room := o.limit - len(o.buf)
	keep := p
	if len(keep) > room {
		keep = keep[:room]
		o.truncated = true
	}
	if len(keep) > cap(o.buf)-len(o.buf) {
		// Doubling keeps many small writes linear overall.
		o.buf = o.growTo(o.buf, max(len(o.buf)+len(keep), 2*cap(o.buf)))
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

// scratch holds read buffers for streaming outputs: one pipe buffer each,
// reused across processes.
var scratch = sync.Pool{New: func() any {
	b := make([]byte, discardChunk)
	return &b
}}

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

// Len is the number of bytes kept (or, with a sink, passed on) so far.
func (o *Output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sink != nil {
		return o.sent
	}
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
