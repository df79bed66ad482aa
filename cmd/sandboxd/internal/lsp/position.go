package lsp

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoding is how a Position's character counts: UTF-8 bytes, UTF-16
// code units (the protocol's default) or code points.
type Encoding string

// The position encodings of LSP 3.17.
const (
	UTF8  Encoding = "utf-8"
	UTF16 Encoding = "utf-16"
	UTF32 Encoding = "utf-32"
)

// lineAt is the text of the zero-based line n of data, without its line
// ending, and whether there is such a line.
func lineAt(data []byte, n int) ([]byte, bool) {
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil, false
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return bytes.TrimSuffix(data, []byte("\r")), true
}

// unitsToByte turns a character offset in enc's units into a byte offset
// in line. An offset past the end, or inside a character, stops at the
// end or before that character.
func unitsToByte(line []byte, units int, enc Encoding) int {
	if enc == UTF8 {
		return min(max(units, 0), len(line))
	}
	b, u := 0, 0
	for b < len(line) && u < units {
		r, size := utf8.DecodeRune(line[b:])
		w := 1
		if enc == UTF16 && r >= 0x10000 && r != utf8.RuneError {
			w = utf16.RuneLen(r)
		}
		if u+w > units {
			break
		}
		u += w
		b += size
	}
	return b
}

// byteToUnits turns a byte offset in line into a character offset in
// enc's units.
func byteToUnits(line []byte, off int, enc Encoding) int {
	off = min(max(off, 0), len(line))
	if enc == UTF8 {
		return off
	}
	u := 0
	for b := 0; b < off; {
		r, size := utf8.DecodeRune(line[b:])
		if enc == UTF16 && r >= 0x10000 && r != utf8.RuneError {
			u += utf16.RuneLen(r)
		} else {
			u++
		}
		b += size
	}
	return u
}

// offsetOf is the byte offset in data of p (in enc's units), clamped to
// the data.
func offsetOf(data []byte, p Position, enc Encoding) int {
	off := 0
	for i := 0; i < p.Line; i++ {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return len(data)
		}
		off += j + 1
	}
	line, _ := lineAt(data[off:], 0)
	return off + unitsToByte(line, p.Character, enc)
}
