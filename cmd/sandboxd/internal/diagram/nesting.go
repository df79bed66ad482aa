package diagram

import (
	"fmt"
	"strings"
)

// checkNesting refuses a source nested deeper than max, by one linear
// pass over its bytes (no parse): the renderers' own parsers and D2's
// compiler are what a deep source would make expensive. Quoted strings,
// comments, D2's block strings and DOT's HTML labels are skipped; what
// counts is brackets ({ and [), and in D2 also each part of a dotted key
// (a.b.c: is three levels, as the container it makes is). It may count
// a level more than the renderer would (a number like 1.5 in a key);
// real diagrams nest a few levels.
func checkNesting(lang Language, source string, max int) error {
	var depth int
	if lang == D2 {
		depth = nestingD2(source)
	} else {
		depth = nestingDOT(source)
	}
	if depth > max {
		return &LimitError{What: fmt.Sprintf("nesting (%d levels)", depth), Limit: fmt.Sprintf("%d levels", max)}
	}
	return nil
}

// skipQuoted returns the index past the string that opens at s[i] with
// the quote s[i], backslash escapes honoured; len(s) if it never closes.
func skipQuoted(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1
		}
	}
	return len(s)
}

// skipPast returns the index past the first end at or after i, len(s)
// if there is none.
func skipPast(s string, i int, end string) int {
	if j := strings.Index(s[i:], end); j >= 0 {
		return i + j + len(end)
	}
	return len(s)
}

// nestingD2 is how deep a D2 source nests: each open map or array adds
// the levels of the key before it (a.b: { is two; an edge's map, one),
// and a key's own levels count where it stands.
func nestingD2(s string) int {
	var opened []int // levels each open bracket added
	base, key, deepest := 0, 1, 0
	inValue, edge := false, false
	endKey := func() {
		if !inValue {
			deepest = max(deepest, base+key)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], `"""`):
			i = skipPast(s, i+3, `"""`)
			continue
		case c == '"' || c == '\'':
			i = skipQuoted(s, i)
			continue
		case c == '#':
			i = skipPast(s, i, "\n") - 1 // the newline still ends the line
			continue
		case c == '|' && inValue:
			i = skipBlockString(s, i)
			continue
		case c == '.' && !inValue && !strings.HasPrefix(s[i:], "..."):
			key++
		case c == ':':
			endKey()
			inValue = true
		case c == '\n' || c == ';':
			endKey()
			key, inValue, edge = 1, false, false
		case strings.HasPrefix(s[i:], "->") || strings.HasPrefix(s[i:], "<-") || strings.HasPrefix(s[i:], "--"):
			endKey()
			key, edge = 1, true
			i += 2
			continue
		case c == '{' || c == '[':
			n := 1
			if c == '{' && !edge {
				n = key
			}
			opened = append(opened, n)
			base += n
			deepest = max(deepest, base)
			key, inValue, edge = 1, false, false
		case c == '}' || c == ']':
			endKey()
			if len(opened) > 0 {
				base -= opened[len(opened)-1]
				opened = opened[:len(opened)-1]
			}
			key, inValue = 1, true
		}
		i++
	}
	endKey()
	return deepest
}

// skipBlockString returns the index past a D2 block string opening at
// s[i] (|md ... |, ||...||, |`...`|): its closer is its opener's
// backticks and pipes reversed.
func skipBlockString(s string, i int) int {
	j := i
	for j < len(s) && s[j] == '|' {
		j++
	}
	pipes := j - i
	k := j
	for k < len(s) && s[k] == '`' {
		k++
	}
	return skipPast(s, k, strings.Repeat("`", k-j)+strings.Repeat("|", pipes))
}

// nestingDOT is how deep a DOT source's braces and brackets nest.
func nestingDOT(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			i = skipQuoted(s, i)
			continue
		case strings.HasPrefix(s[i:], "//") || (c == '#' && (i == 0 || s[i-1] == '\n')):
			i = skipPast(s, i, "\n")
			continue
		case strings.HasPrefix(s[i:], "/*"):
			i = skipPast(s, i+2, "*/")
			continue
		case c == '<':
			i = skipHTML(s, i)
			continue
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth = max(depth-1, 0)
		}
		i++
	}
	return deepest
}

// skipHTML returns the index past a DOT HTML string (<...>, its angle
// brackets balanced), len(s) if it never closes.
func skipHTML(s string, i int) int {
	n := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '<':
			n++
		case '>':
			if n--; n == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}
