package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// document decodes the single YAML document in data and returns its root
// node, or nil after recording why there is none.
func (p *parser) document(data []byte) *yaml.Node {
	if pr, bad := checkEncoding(data); bad {
		pr.File = p.file
		p.problems = append(p.problems, pr)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := decodeSafely(dec, &doc)
	if errors.Is(err, io.EOF) {
		p.addAt(nil, "", "file is empty")
		return nil
	}
	if err != nil {
		p.problems = append(p.problems, p.syntaxProblem(err))
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0] == nil {
		p.addAt(nil, "", "file is empty")
		return nil
	}
	// yaml.v3 stops after one document; a second one would be silently
	// ignored, which hides mistakes like a stray "---".
	var next yaml.Node
	switch err := decodeSafely(dec, &next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.problems = append(p.problems, p.syntaxProblem(err))
	case len(next.Content) > 0 && next.Content[0].ShortTag() != nullTag:
		p.addAt(&next, "", "a RuntimeConfig is a single YAML document; found a second one")
	}
	return doc.Content[0]
}

// decodeSafely turns a panic inside the YAML parser into an error: yaml.v3
// still has inputs that reach its "internal error" panics, and a config
// loader must not take the host down over a malformed file.
func decodeSafely(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}

// syntaxProblem turns a yaml.v3 error ("yaml: line 3: did not find ...")
// into a Problem at that line.
func (p *parser) syntaxProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pr := Problem{File: p.file, Msg: msg}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil && line > 0 {
				pr.Line, pr.Msg = line, text
			}
		}
	}
	return pr
}

// checkEncoding finds bytes YAML forbids. yaml.v3 rejects them too, but
// without saying where; a binary or mis-encoded file deserves a position.
// UTF-16 input (which YAML allows, with a byte order mark) is left to
// yaml.v3.
func checkEncoding(data []byte) (Problem, bool) {
	if len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE) {
		return Problem{}, false
	}
	line, col := 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size == 1:
			return Problem{Line: line, Column: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02X)", data[0])}, true
		case !yamlChar(r):
			return Problem{Line: line, Column: col, Msg: fmt.Sprintf("control character U+%04X is not allowed", r)}, true
		case r == '\n':
			line, col = line+1, 1
		default:
			col++
		}
		data = data[size:]
	}
	return Problem{}, false
}

// yamlChar reports whether YAML 1.2 allows r in a stream.
func yamlChar(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r', r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD:
		return true
	}
	return r >= 0x10000 && r <= 0x10FFFF
}
