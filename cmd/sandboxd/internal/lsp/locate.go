package lsp

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Spot is where a symbol occurs in a file: a zero-based line and the
// byte offset of its first character in that line.
type Spot struct {
	Line, Byte int
}

// occurrence is one place a symbol occurs, ranked by how much it looks
// like the symbol's declaration.
type occurrence struct {
	Spot
	rank int // 2: declared by keyword, 1: assigned, 0: used
}

// declarations match the text before a name that declares it, and
// assignments the text after a name at the start of a line.
var (
	declarations = map[string]*regexp.Regexp{
		Go:     regexp.MustCompile(`\b(func(\s*\([^)]*\))?|type|var|const)\s+$`),
		Python: regexp.MustCompile(`\b(def|class)\s+$`),
	}
	assignment = regexp.MustCompile(`^\s*(,\s*\w+\s*)*(:=|=[^=]|\s+[\w\[\]*.]+\s*(=|$)|\s*:[^=]+=)`)
)

// Locate finds symbol in data, a file in language lang: on the
// one-based line when it is not 0, else the occurrence that declares it,
// else the first. Occurrences in comments and string literals do not
// count. A qualified symbol (Type.Method) looks for Method, preferring
// lines that also name Type. The note says which occurrence was taken
// when there was a choice; an error says why there is no answer: the
// symbol is not there, or is declared more than once and needs a line.
func Locate(data []byte, lang, symbol string, line int) (Spot, string, error) {
	qualifier, name := "", symbol
	if i := strings.LastIndexByte(symbol, '.'); i >= 0 {
		qualifier, name = symbol[:i], symbol[i+1:]
	}
	if !isIdentifier(name) {
		return Spot{}, "", fmt.Errorf("symbol %q is not an identifier: give a name such as Foo or Type.Method", symbol)
	}
	all := occurrences(data, lang, name)
	if len(all) == 0 {
		return Spot{}, "", fmt.Errorf("%s does not occur in this file (outside comments and strings)", name)
	}
	if line > 0 {
		for _, o := range all {
			if o.Line == line-1 {
				return o.Spot, "", nil
			}
		}
		return Spot{}, "", fmt.Errorf("%s does not occur on line %d; it does on %s", name, line, lineList(all))
	}
	if qualifier != "" {
		var qualified []occurrence
		for _, o := range all {
			text, _ := lineAt(data, o.Line)
			if hasIdentifier(text, qualifier[strings.LastIndexByte(qualifier, '.')+1:]) {
				qualified = append(qualified, o)
			}
		}
		if len(qualified) > 0 {
			all = qualified
		}
	}
	best := 0
	for _, o := range all {
		best = max(best, o.rank)
	}
	var top []occurrence
	for _, o := range all {
		if o.rank == best {
			top = append(top, o)
		}
	}
	switch {
	case best == 2 && len(top) > 1:
		return Spot{}, "", fmt.Errorf("%s is declared more than once in this file (%s): pass line to say which", name, lineList(top))
	case best > 0 || len(all) == 1:
		return top[0].Spot, "", nil
	}
	return top[0].Spot, fmt.Sprintf("took the first of %d occurrences (%s); pass line to pick another", len(all), lineList(all)), nil
}

// lineList names the lines of occurrences, one-based, at most ten.
func lineList(occ []occurrence) string {
	var lines []string
	last := -1
	for _, o := range occ {
		if o.Line == last {
			continue
		}
		last = o.Line
		if len(lines) == 10 {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, fmt.Sprint(o.Line+1))
	}
	if len(lines) == 1 {
		return "line " + lines[0]
	}
	return "lines " + strings.Join(lines, ", ")
}

// occurrences lists where name occurs as a whole identifier in code.
func occurrences(data []byte, lang, name string) []occurrence {
	var out []occurrence
	inBlock := false // inside a /* */ comment (Go)
	for n, text := range bytes.Split(data, []byte("\n")) {
		code := codeMask(text, lang, &inBlock)
		for from := 0; ; {
			i := bytes.Index(text[from:], []byte(name))
			if i < 0 {
				break
			}
			at := from + i
			from = at + len(name)
			if code[at] && boundary(text, at, at+len(name)) {
				out = append(out, occurrence{Spot{n, at}, rankOf(text, at, len(name), lang)})
			}
		}
	}
	return out
}

func rankOf(text []byte, at, n int, lang string) int {
	if re := declarations[lang]; re != nil && re.Match(text[:at]) {
		return 2
	}
	if len(bytes.TrimSpace(text[:at])) == 0 && assignment.Match(text[at+n:]) {
		return 1
	}
	return 0
}

// codeMask marks the bytes of line that are code: not in a comment or
// a string literal. It knows Go's and Python's comments and quotes, one
// line at a time; a string spanning lines (a raw string, a docstring)
// counts as code past its first line.
func codeMask(line []byte, lang string, inBlock *bool) []bool {
	mask := make([]bool, len(line)+1)
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case *inBlock:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				*inBlock = false
				i++
			}
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || (c == '`' && lang == Go):
			quote = c
		case lang == Python && c == '#':
			return mask
		case lang != Python && c == '/' && i+1 < len(line) && line[i+1] == '/':
			return mask
		case lang != Python && c == '/' && i+1 < len(line) && line[i+1] == '*':
			*inBlock = true
			i++
		default:
			mask[i] = true
		}
	}
	return mask
}

// boundary reports whether line[from:to] is not part of a longer
// identifier.
func boundary(line []byte, from, to int) bool {
	if r, _ := utf8.DecodeLastRune(line[:from]); from > 0 && isIdentRune(r) {
		return false
	}
	if r, _ := utf8.DecodeRune(line[to:]); to < len(line) && isIdentRune(r) {
		return false
	}
	return true
}

func hasIdentifier(line []byte, name string) bool {
	for from := 0; ; {
		i := bytes.Index(line[from:], []byte(name))
		if i < 0 {
			return false
		}
		if boundary(line, from+i, from+i+len(name)) {
			return true
		}
		from += i + len(name)
	}
}

func isIdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !isIdentRune(r) || (i == 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}
