// Package bounded reads whole inputs (a config file, a hook's input)
// without trusting their size: a read stops one byte past its limit and
// fails with a TooLargeError that says what was too large and what the
// limit is, so /dev/zero or a runaway pipe costs at most the limit in
// memory, never all of it.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// TooLargeError is an input past its limit.
type TooLargeError struct {
	What  string // "input", "config file x.yaml"
	Limit int64  // bytes
	Hint  string // how to raise the limit, if it can be raised
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("%s is larger than %s", e.What, Size(e.Limit))
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Read reads r to its end, or fails with a *TooLargeError naming what as
// soon as it has read more than limit bytes.
func Read(r io.Reader, limit int64, what, hint string) ([]byte, error) {
	data, err := readAll(io.LimitReader(r, limit+1), sizeHint(r, limit))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit, Hint: hint}
	}
	return data, nil
}

// ReadFile reads the file at path as Read does. The file's reported size
// is not trusted: devices and pipes report none.
func ReadFile(path string, limit int64, what, hint string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- opens what the caller names: the RuntimeConfig, or the CLI's input file, both the operator's
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := Read(f, limit, what, hint)
	if err != nil && !errors.As(err, new(*TooLargeError)) {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, err
}

// Size renders n bytes for a message: "64 MiB", "1500 bytes".
func Size(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// ParseSize reads a size as Docker writes one: a number of bytes, or a
// number with a suffix b, k, m or g (powers of 1024, either case, "1.5g"
// allowed).
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'b':
			t = t[:n-1]
		case 'k':
			mult, t = 1<<10, t[:n-1]
		case 'm':
			mult, t = 1<<20, t[:n-1]
		case 'g':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. \"256m\", \"1g\" or a number of bytes)", s)
	}
	n := v * float64(mult)
	if n > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is out of range", s)
	}
	return int64(n), nil
}

// Tail is a writer that keeps the last Max bytes written to it, for the
// last words of a process (a plugin's stderr, a log). It is safe for
// concurrent use; the zero value keeps nothing until Max is set.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	// Compacting only once twice the tail is held keeps each write's cost
	// proportional to its own size.
	if len(t.buf) >= 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the last Max bytes written.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.Max {
		b = b[len(b)-t.Max:]
	}
	return append([]byte(nil), b...)
}

// readAll is io.ReadAll starting from a buffer of size bytes: a file read
// whole then costs its size once, where growing by doubling would have
// allocated (and left for the collector) about twice that again. With no
// size known (size is 0: a pipe) it reads into chunks and joins them at
// the end, which holds the input twice at most; growing one buffer held
// the old and the new buffer and the garbage of every earlier growth (a
// 50 MB input read from a pipe peaked at 150 MB).
func readAll(r io.Reader, size int) ([]byte, error) {
	if size <= 0 {
		return readChunks(r)
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// Chunk sizes of readChunks: they double from the first to the last, so
// a small input costs little and a large one a chunk per few MiB.
const (
	firstChunk = 512
	lastChunk  = 4 << 20
)

func readChunks(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	total, next := 0, firstChunk
	for {
		c := make([]byte, next)
		n, err := io.ReadFull(r, c)
		if n > 0 {
			chunks = append(chunks, c[:n])
			total += n
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			return join(chunks, total), err
		}
		next = min(2*next, lastChunk)
	}
}

// join copies chunks, total bytes in all, into one slice of that size.
func join(chunks [][]byte, total int) []byte {
	if len(chunks) == 1 {
		return chunks[0]
	}
	b := make([]byte, 0, total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b
}

// sizeHint is what r will most likely yield, one byte more so that the
// read that finds the end needs no room of its own: a regular file's size
// (at most limit), else 0: not known.
func sizeHint(r io.Reader, limit int64) int {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 {
		return 0
	}
	return int(min(fi.Size(), limit) + 1)
}
