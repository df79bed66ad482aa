package wire

import (
	"bytes"
	"encoding/json"
)

// This file is a small JSON scanner that works on the document's bytes
// in place. One pass checks that a document is valid JSON (exactly as
// json.Valid has it), holds no lone UTF-16 surrogate escape (which
// json.Valid lets through and encoding/json decodes as U+FFFD) and no key
// twice in one object (as duplicateKey has it), and can write a skeleton of the document: the
// same JSON with every long string value replaced by "". The skeleton is
// small whatever the strings hold, so the strict decoders (json.Decoder
// with DisallowUnknownFields, which copies what it reads) can check it
// cheaply, leaving only values to be read from the document itself.
// Other helpers split a valid object or array into sub-slices of it,
// without copying.

// maxScanDepth is encoding/json's nesting limit: a document nested deeper
// is invalid to it, so it is to the scanner too.
const maxScanDepth = 10000

// smallObject is how many keys an object may have before its duplicate
// check switches from comparing each new key with the earlier ones to a
// map.
const smallObject = 16

// scanner checks one JSON document. The zero value with data set only
// validates; set elide to a length to also write the skeleton.
type scanner struct {
	data []byte
	i    int
	// elide, when positive, is the length (in bytes of the document,
	// quotes included) past which a string value is written to skel as "".
	elide  int
	skel   []byte
	copied int // data[:copied] has been accounted for in skel
	depth  int
	// keys holds the decoded keys of the objects being scanned, innermost
	// last; each object's start in it is on the Go stack.
	keys [][]byte
	// dupKey is the first key found twice in one object.
	dupKey  string
	dupSeen bool
}

// scanDocument reports whether data, valid UTF-8, is one valid JSON value
// with no lone surrogate escape and no key repeated in any object. With elide > 0 it also returns the
// skeleton.
func scanDocument(data []byte, elide int) (skel []byte, ok bool) {
	s := &scanner{data: data, elide: elide}
	if elide > 0 {
		s.skel = make([]byte, 0, min(len(data), 4096))
	}
	if !s.document() || s.dupSeen {
		return nil, false
	}
	if elide > 0 {
		s.skel = append(s.skel, data[s.copied:]...)
	}
	return s.skel, true
}

// document scans one value surrounded by optional whitespace.
func (s *scanner) document() bool {
	s.space()
	if !s.value() {
		return false
	}
	s.space()
	return s.i == len(s.data)
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans the value at s.i, which must not be whitespace.
func (s *scanner) value() bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.i
		if _, ok := s.str(); !ok {
			return false
		}
		if s.elide > 0 && s.i-start > s.elide {
			s.skel = append(s.skel, s.data[s.copied:start]...)
			s.skel = append(s.skel, '"', '"')
			s.copied = s.i
		}
		return true
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.data[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits scans one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// str scans the string at s.i and reports whether it holds an escape.
// Bytes outside ASCII are not checked here: decodeInput has already
// checked that the whole document is UTF-8.
func (s *scanner) str() (escaped, ok bool) {
	s.i++ // the opening quote
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
			escaped = true
			if !s.escape() {
				return false, false
			}
		default:
			s.i++
		}
	}
	return false, false
}

// escape scans the escape sequence at s.i.
func (s *scanner) escape() bool {
	if s.i+1 >= len(s.data) {
		return false
	}
	switch s.data[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		n := escapeLen(s.data[s.i:])
		s.i += n
		return n > 0
	}
	return false
}

// escapeLen is the length of the \u escape data starts with: 6, or 12
// for a surrogate pair; 0 when it is malformed or a lone surrogate, which
// decoders turn into U+FFFD: the hook would read another character than
// the one written.
func escapeLen(data []byte) int {
	r, ok := hex4(data)
	switch {
	case !ok:
		return 0
	case 0xDC00 <= r && r <= 0xDFFF:
		return 0 // a low surrogate first
	case r < 0xD800 || r > 0xDBFF:
		return 6
	}
	if len(data) < 12 || data[6] != '\\' {
		return 0
	}
	if lo, ok := hex4(data[6:]); !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0
	}
	return 12
}

// hex4 decodes the four hex digits of the \u escape data starts with.
func hex4(data []byte) (rune, bool) {
	if len(data) < 6 || data[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, h := range data[2:6] {
		switch {
		case '0' <= h && h <= '9':
			h -= '0'
		case 'a' <= h && h <= 'f':
			h -= 'a' - 10
		case 'A' <= h && h <= 'F':
			h -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

// loneSurrogate is the offset in data, valid JSON, of the first \u escape
// of a UTF-16 surrogate not in a pair, or -1. A backslash in valid JSON
// is always in a string, always an escape.
func loneSurrogate(data []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 >= len(data) || data[i+1] != 'u' {
			i += 2
			continue
		}
		n := escapeLen(data[i:])
		if n == 0 {
			return i
		}
		i += n
	}
}

func (s *scanner) object() bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.i++ // {
	base := len(s.keys)
	var seen map[string]struct{}
	s.space()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return false
		}
		start := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		if !s.dupSeen {
			key := s.data[start+1 : s.i-1]
			if escaped {
				key = unescapeKey(s.data[start:s.i])
			}
			seen = s.addKey(base, key, seen)
		}
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value() {
			return false
		}
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			s.keys = s.keys[:base]
			s.depth--
			return true
		default:
			return false
		}
	}
}

// addKey records key in the object whose keys start at base, noting the
// first key seen twice. Past smallObject keys, seen (returned) indexes
// them.
func (s *scanner) addKey(base int, key []byte, seen map[string]struct{}) map[string]struct{} {
	switch n := len(s.keys) - base; {
	case seen != nil:
	case n < smallObject:
		for _, k := range s.keys[base:] {
			if bytes.Equal(k, key) {
				s.dupKey, s.dupSeen = string(key), true
				return nil
			}
		}
		s.keys = append(s.keys, key)
		return nil
	default:
		seen = make(map[string]struct{}, 2*n)
		for _, k := range s.keys[base:] {
			seen[string(k)] = struct{}{}
		}
	}
	if _, dup := seen[string(key)]; dup {
		s.dupKey, s.dupSeen = string(key), true
		return seen
	}
	seen[string(key)] = struct{}{}
	return seen
}

// unescapeKey decodes a valid quoted key holding an escape as
// encoding/json does (a lone surrogate becomes U+FFFD), so that keys
// compare as decoders see them.
func unescapeKey(quoted []byte) []byte {
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return quoted // unreachable: the scanner has checked the string
	}
	return []byte(k)
}

func (s *scanner) array() bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.i++ // [
	s.space()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// member is one key and value of an object, the value a sub-slice of the
// document.
type member struct {
	key   string
	value []byte
}

// objectMembers splits data, a valid JSON object, into its members, in
// document order. ok is false if data is not an object.
func objectMembers(data []byte) (members []member, ok bool) {
	s := &scanner{data: data}
	s.space()
	if s.i >= len(data) || data[s.i] != '{' {
		return nil, false
	}
	s.i++
	for {
		s.space()
		if s.i >= len(data) || data[s.i] == '}' {
			return members, s.i < len(data)
		}
		if data[s.i] == ',' {
			s.i++
			s.space()
		}
		start := s.i
		escaped, ok := s.str()
		if !ok {
			return nil, false
		}
		key := data[start+1 : s.i-1]
		if escaped {
			key = unescapeKey(data[start:s.i])
		}
		s.space()
		if s.i >= len(data) || data[s.i] != ':' {
			return nil, false
		}
		s.i++
		s.space()
		vstart := s.i
		if !s.value() {
			return nil, false
		}
		members = append(members, member{key: string(key), value: data[vstart:s.i]})
	}
}

// arrayElements splits data, a valid JSON array, into its elements. ok is
// false if data is not an array.
func arrayElements(data []byte) (elems [][]byte, ok bool) {
	s := &scanner{data: data}
	s.space()
	if s.i >= len(data) || data[s.i] != '[' {
		return nil, false
	}
	s.i++
	elems = [][]byte{}
	for {
		s.space()
		if s.i >= len(data) || data[s.i] == ']' {
			return elems, s.i < len(data)
		}
		if data[s.i] == ',' {
			s.i++
			s.space()
		}
		start := s.i
		if !s.value() {
			return nil, false
		}
		elems = append(elems, data[start:s.i])
	}
}
