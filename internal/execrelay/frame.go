package execrelay

import (
	"errors"
	"io"
	"sync"
	"time"
)

// Magic opens every relay connection. A gRPC client's first bytes are
// "PRI " (HTTP/2's preface), so the two never meet; another version of
// the relay has another Magic, which an older serve takes for gRPC and
// closes.
const Magic = "PKX1"

// The frame types.
const (
	FrameRequest   byte = 'Q' // exec → serve: the Request
	FrameStdin     byte = 'I' // exec → serve: bytes of exec's stdin
	FrameStdinEnd  byte = 'E' // exec → serve: stdin ended; a payload is the read error
	FrameCancel    byte = 'C' // exec → serve: exec was interrupted
	FrameAccept    byte = 'A' // serve → exec: the call runs (an Accept)
	FrameStdout    byte = 'O' // serve → exec: bytes for exec's stdout
	FrameStderr    byte = 'R' // serve → exec: bytes for exec's stderr
	FrameHeartbeat byte = 'H' // serve → exec: still there
	FrameExit      byte = 'X' // serve → exec: exec's exit status, four bytes
)

// The relay's timing, one set for both ends.
const (
	// AnswerTimeout bounds reaching a serve, from exec's start to the
	// serve's first frame: a live serve answers in a millisecond, and
	// the fallback is a cold call.
	AnswerTimeout = 2 * time.Second
	// HeartbeatInterval is how often a serve says it is there while a
	// call runs.
	HeartbeatInterval = time.Second
	// StallTimeout is how long either end waits for the other before it
	// takes it for stopped: exec for a frame once the call runs (longer
	// than before the call, since giving up ends a call that may be
	// running well), a serve for the request, or for exec to take a
	// frame once the call has ended.
	StallTimeout = 5 * time.Second
)

// MaxChunk is the most a Stdin, Stdout or Stderr frame carries.
const MaxChunk = 32 << 10

// maxRequest bounds a Request frame: exec's arguments and environment,
// which the kernel holds to a quarter of the stack limit, 2 MiB as
// usually set.
const maxRequest = 16 << 20

// maxFrame is the largest payload either end reads.
const maxFrame = maxRequest

const headerLen = 5

// ErrFrameTooLarge is a frame whose length is over what its reader takes.
var ErrFrameTooLarge = errors.New("relay frame too large")

// ReadFrame reads one frame from r into buf (grown as needed) and
// returns its type and payload, which aliases buf.
func ReadFrame(r io.Reader, buf []byte) (typ byte, payload, grown []byte, err error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, buf, err
	}
	n := int(h[1])<<24 | int(h[2])<<16 | int(h[3])<<8 | int(h[4])
	if n > maxFrame || (h[0] != FrameRequest && n > MaxChunk+64) {
		return 0, nil, buf, ErrFrameTooLarge
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	payload = buf[:n]
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, buf, err
	}
	return h[0], payload, buf, nil
}

// Writer writes frames to one connection from any number of goroutines.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter writes frames to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Frame writes one frame: header and payload in one write, so that a
// frame is one segment on the socket.
func (w *Writer) Frame(typ byte, payload []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = appendHeader(w.buf[:0], typ, len(payload))
	w.buf = append(w.buf, payload...)
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 4*MaxChunk {
		w.buf = nil
	}
	return err
}

// Stream is an io.Writer whose bytes go out as frames of typ, each at
// most MaxChunk.
func (w *Writer) Stream(typ byte) io.Writer { return streamWriter{w, typ} }

// Exit writes the Exit frame of code.
func (w *Writer) Exit(code int) error {
	var b [4]byte
	putUint32(b[:], uint32(int32(code))) // #nosec G115 -- an exit status is 32 bits on the wire, sign kept
	return w.Frame(FrameExit, b[:])
}

type streamWriter struct {
	w   *Writer
	typ byte
}

func (s streamWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := min(len(p), MaxChunk)
		if err := s.w.Frame(s.typ, p[:c]); err != nil {
			return n, err
		}
		n += c
		p = p[c:]
	}
	return n, nil
}

func appendHeader(b []byte, typ byte, n int) []byte {
	return append(b, typ, byte(n>>24), byte(n>>16), byte(n>>8), byte(n)) // #nosec G115 -- a frame length, at most maxFrame
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v) // #nosec G115 -- big-endian bytes: each takes its 8 bits
}

func uint32At(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// ExitCode is the status an Exit frame's payload carries; ok is false
// for a payload that is not one.
func ExitCode(payload []byte) (code int, ok bool) {
	if len(payload) != 4 {
		return 0, false
	}
	return int(int32(uint32At(payload))), true // #nosec G115 -- the wire's 32-bit status, sign kept
}
