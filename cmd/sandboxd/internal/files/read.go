package files

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

const (
	// sniffLen is how much of a file decides whether it is text.
	sniffLen = 8 << 10
	// noteRoom is the part of MaxReadBytes kept for the closing note, so
	// the note fits under the cap too.
	noteRoom = 256
	// cutMargin is how far past a long line's cut Read keeps the line, so
	// that a secret across the cut is seen whole and redacted before the
	// cut is made: longer than any known format's secret.
	cutMargin = 4 << 10
	// maxBackOff bounds how far Read moves a cut back to the start of the
	// word it would split.
	maxBackOff = 128
)

// formats scrubs the known credential formats from the part of a long
// line around its cut when Options gives no Scrubber. Every result is
// scrubbed again as a whole; only here can a secret that the cut would
// split still be seen whole. It is made on first use: building it took
// about 1.5 ms of every sandboxd start.
var formats = sync.OnceValue(func() *scrub.Scrubber { return scrub.New(nil) })

// Read returns the text file at filePath with its lines numbered as cat -n
// numbers them: the number right-aligned in six columns, a tab, the line.
// offset is the 1-based line to start at (0 is 1), limit how many lines
// to show (0 is Options.MaxLines). Lines over Options.MaxLineLength
// characters are cut and marked; the result stops before
// Options.MaxReadBytes (though it always shows one line), and when it
// stops before the end of the file a closing note says which lines it
// showed and the offset to read on from. Binary files are refused.
//
// Read records the file in l, with the hash of its whole content, even
// when it shows only part of it: that is what lets Write and Edit change
// it.
func (f *Files) Read(l *Ledger, filePath string, offset, limit int) (string, error) {
	out, err := f.read(l, filePath, offset, limit)
	if err != nil {
		return "", wrapPath("read", filePath, err)
	}
	return out, nil
}

func (f *Files) read(l *Ledger, path string, offset, limit int) (string, error) {
	if offset < 0 {
		return "", fmt.Errorf("offset %d is negative; it is the 1-based line to start at", offset)
	}
	if limit < 0 {
		return "", fmt.Errorf("limit %d is negative; it is how many lines to read (0: up to %d)", limit, f.opts.MaxLines)
	}
	start := max(offset, 1)
	if limit == 0 {
		limit = f.opts.MaxLines
	}
	end := math.MaxInt // the first line not to show
	if limit < math.MaxInt-start {
		end = start + limit
	}

	rel, err := f.ws.Rel(path)
	if err != nil {
		return "", err
	}
	abs, err := f.ws.Abs(path)
	if err != nil {
		return "", err
	}
	// Stat before opening: opening a FIFO would block.
	fi, err := f.ws.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fs.ErrNotExist
	}
	if err != nil {
		return "", err
	}
	if err := checkReadable(fi); err != nil {
		return "", err
	}
	fh, err := f.ws.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	// What was opened, which a rename may have swapped in since the Stat.
	if fi, err = fh.Stat(); err != nil {
		return "", err
	}
	if err := checkReadable(fi); err != nil {
		return "", err
	}

	hr := &hashingReader{r: fh, h: sha256.New()}
	br := bufio.NewReaderSize(hr, 64<<10)
	sniff, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if looksBinary(sniff) {
		return "", fmt.Errorf("it is a binary file (%d bytes); Read shows text files only", fi.Size())
	}

	var (
		out         strings.Builder
		entry       []byte // the line being formatted
		buf         []byte
		n           int // lines seen
		first, last int // lines shown
		capped      bool
	)
	budget := max(f.opts.MaxReadBytes-noteRoom, 0)
	// Line numbers add 7 bytes a line; most lines are longer than 7.
	out.Grow(int(min(int64(budget), fi.Size()*2+1024)))
	keep := f.opts.MaxLineLength*utf8.UTFMax + cutMargin
	for {
		show := !capped && n+1 >= start && n+1 < end
		k := 0
		if show {
			k = keep
		}
		text, chars, ok, err := readLine(br, k, buf)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		n++
		buf = text
		if !show {
			continue
		}
		entry = f.appendLine(entry[:0], n, text, chars)
		if last > 0 && out.Len()+len(entry) > budget {
			capped = true
			continue
		}
		out.Write(entry)
		if first == 0 {
			first = n
		}
		last = n
	}

	// The whole file went through the hash; only now is it known.
	st := state{size: hr.n, mtime: fi.ModTime()}
	copy(st.sum[:], hr.h.Sum(nil))
	if n == 0 {
		l.put(f.ws, rel, st)
		return fmt.Sprintf("The file %s exists but is empty.", abs), nil
	}
	if start > n {
		return "", fmt.Errorf("offset %d is past the end of the file, which has %s", offset, plural(n, "line"))
	}
	l.put(f.ws, rel, st)

	result := strings.TrimSuffix(out.String(), "\n")
	switch {
	case capped:
		result += fmt.Sprintf("\n\n[Output capped at %d bytes: showed lines %d-%d of %d. To read on, call Read with offset=%d.]",
			f.opts.MaxReadBytes, first, last, n, last+1)
	case last < n:
		result += fmt.Sprintf("\n\n[Showed lines %d-%d of %d. To read on, call Read with offset=%d.]",
			first, last, n, last+1)
	}
	return result, nil
}

// checkReadable refuses what Read cannot show as a file.
func checkReadable(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return errors.New("it is a directory, not a file; use Glob to list the files in it")
	case !fi.Mode().IsRegular():
		return fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	}
	return nil
}

// appendLine appends line n to dst as cat -n shows it, cut to
// MaxLineLength characters. A line that is cut is scrubbed first (what
// was kept of it, which reaches cutMargin past the cut), so a secret
// across the cut is redacted whole, not shown in part; the cut never
// splits a redaction marker, and it moves back to the start of a word it
// would split, up to maxBackOff bytes, so the start of a secret the
// scrubber does not know is not left at the end. Invalid UTF-8 shows as
// U+FFFD.
func (f *Files) appendLine(dst []byte, n int, text []byte, chars int) []byte {
	dst = appendLineNumber(dst, n)
	if chars > f.opts.MaxLineLength {
		dst = append(dst, strings.ToValidUTF8(cutLine(f.scrubber(), text, chars, f.opts.MaxLineLength), "\uFFFD")...)
		dst = fmt.Appendf(dst, "… [line truncated: %d chars]", chars)
	} else if utf8.Valid(text) {
		dst = append(dst, text...)
	} else {
		dst = append(dst, strings.ToValidUTF8(string(text), "\uFFFD")...)
	}
	return append(dst, '\n')
}

// appendLineNumber appends n right-aligned in six columns and a tab, as
// "%6d\t" would, without fmt's cost on every line of a Read.
func appendLineNumber(dst []byte, n int) []byte {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for range 6 - len(digits) {
		dst = append(dst, ' ')
	}
	dst = append(dst, digits...)
	return append(dst, '\t')
}

// cutLine returns the first limit characters of a line of chars
// characters, of which kept holds the start, scrubbed by sc: see
// formatLine.
func cutLine(sc *scrub.Scrubber, kept []byte, chars, limit int) string {
	scrubbed := sc.Window(string(kept), countChars(kept) < chars)
	end := scrub.SafeCut(scrubbed, len(firstChars([]byte(scrubbed), limit)))
	if end > 0 && end < len(scrubbed) && !wordBreak(scrubbed[end-1]) && !wordBreak(scrubbed[end]) {
		for i := end - 1; i > 0 && end-i <= maxBackOff; i-- {
			if wordBreak(scrubbed[i-1]) {
				end = i
				break
			}
		}
	}
	return scrubbed[:end]
}

// wordBreak reports whether c ends a run of characters a secret could be
// made of.
func wordBreak(c byte) bool {
	return c <= ' ' || strings.IndexByte("\"'`,;()[]{}<>|", c) >= 0
}

// readLine reads the next line from br without its line ending (\n or
// \r\n). It keeps at most keep bytes of the line, appended to buf[:0], so
// a line of gigabytes costs no memory, and counts all its characters. ok
// is false at the end of the input.
func readLine(br *bufio.Reader, keep int, buf []byte) (kept []byte, chars int, ok bool, err error) {
	kept = buf[:0]
	var (
		size     int  // bytes of the line, without its ending
		lastByte byte // the line's last byte so far, to spot a \r before \n
		seen     bool
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			seen = true
		}
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 {
			lastByte = chunk[len(chunk)-1]
		}
		if room := keep - len(kept); room > 0 {
			kept = append(kept, chunk[:min(room, len(chunk))]...)
		}
		size += len(chunk)
		chars += countChars(chunk)
		switch {
		case complete:
			if lastByte == '\r' {
				chars--
				if len(kept) == size {
					kept = kept[:len(kept)-1]
				}
			}
			return kept, chars, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return kept, chars, seen, nil
		default:
			return nil, 0, false, err
		}
	}
}

// countChars counts UTF-8 characters by their leading bytes, so a
// character split across two chunks counts once.
func countChars(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// firstChars is the first limit characters of b, counted as countChars
// counts them.
func firstChars(b []byte, limit int) []byte {
	n := 0
	for i, c := range b {
		if c&0xC0 != 0x80 {
			if n == limit {
				return b[:i]
			}
			n++
		}
	}
	return b
}

// looksBinary reports whether a file starting with b is not text: it holds
// a NUL byte, or over 30% of it is control characters that text does not
// use or bytes that are not UTF-8. The threshold lets through text in a
// legacy 8-bit encoding, whose accented letters are not UTF-8.
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	odd, total := 0, 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 && !utf8.FullRune(b[i:]) {
			break // a character cut by the end of the sample
		}
		total++
		switch {
		case r == utf8.RuneError && size == 1:
			odd++
		case r < 0x20 && !strings.ContainsRune("\t\n\r\f\v\b\x1b", r), r == 0x7f:
			odd++
		}
		i += size
	}
	return odd*10 > total*3
}

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// scrubber is what scrubs a long line before its cut: the server's, with
// its registered values, else the known formats alone.
func (f *Files) scrubber() *scrub.Scrubber {
	if f.opts.Scrubber != nil {
		return f.opts.Scrubber
	}
	return formats()
}
