package guard

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Symbols a word may resolve to when it names a variable whose value
// the guard cannot know but whose meaning it can: rm -rf "$HOME" is as
// bad whatever the home directory is.
const (
	symHome = "$HOME"
	symPPID = "$PPID"
)

// symbols are the variables a word may hold and still count as known.
var symbols = map[string]string{"HOME": symHome, "PPID": symPPID}

// resolve is what the shell makes of a word, when that is known without
// running anything: quotes removed, backslash and ANSI-C ($'\x73')
// escapes applied, a leading ~ and the variables in symbols kept as
// their symbols, and a command substitution of a literal echo or printf
// replaced by what it prints. ok is false for a word built at run time
// (any other $(...), $x; globs are kept as written).
func resolve(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value)
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				v = symHome + v[1:]
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeQuoted(q.Value))
				case *syntax.ParamExp:
					sym, ok := symbol(q)
					if !ok {
						return "", false
					}
					b.WriteString(sym)
				case *syntax.CmdSubst:
					out, ok := substOutput(q)
					if !ok {
						return "", false
					}
					b.WriteString(out)
				default:
					return "", false
				}
			}
		case *syntax.CmdSubst:
			out, ok := substOutput(p)
			if !ok {
				return "", false
			}
			b.WriteString(out)
		case *syntax.ParamExp:
			sym, ok := symbol(p)
			if !ok {
				return "", false
			}
			b.WriteString(sym)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// symbol is the symbol of a plain $NAME or ${NAME} in symbols.
func symbol(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil || len(p.Modifiers) > 0 {
		return "", false
	}
	sym, ok := symbols[p.Param.Value]
	return sym, ok
}

// unescape applies the backslash escapes of an unquoted word: \r is r.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted applies the escapes of a double-quoted string, where a
// backslash escapes only $, `, ", \ and a newline.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// arg is one argument of a simple command: its value when known.
type arg struct {
	value string
	known bool
}

// resolveAll resolves words into arguments. A word with an unquoted
// command substitution is split at whitespace, as the shell splits
// what it prints: $(echo sudo id) is two words.
func resolveAll(ws []*syntax.Word) []arg {
	out := make([]arg, 0, len(ws))
	for _, w := range ws {
		if words, ok := braces(w); ok {
			// s{u,}do is sudo sdo; {sudo,} is sudo (a null word goes).
			for _, b := range words {
				if v, ok := resolve(b); !ok || v != "" {
					out = append(out, arg{v, ok})
				}
			}
			continue
		}
		v, ok := resolve(w)
		if ok && unquotedSubst(w) {
			for _, f := range strings.Fields(v) {
				out = append(out, arg{f, true})
			}
			continue
		}
		out = append(out, arg{v, ok})
	}
	return out
}

func unquotedSubst(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.CmdSubst); ok {
			return true
		}
	}
	return false
}

// maxBraceWords bounds the words a brace expansion is followed into.
const maxBraceWords = 64

// braces is w brace-expanded, when it holds a brace expansion, without
// changing w; ok is false when it holds none or too many words.
func braces(w *syntax.Word) ([]*syntax.Word, bool) {
	c := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(c) {
		return nil, false
	}
	var out []*syntax.Word
	for b, err := range expand.BracesSeq(nil, c) {
		if err != nil || len(out) == maxBraceWords {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}
