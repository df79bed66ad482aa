package symbols

import (
	"fmt"
	"slices"
	"strings"
)

// Symbol is one definition the index holds.
type Symbol struct {
	Name      string
	Kind      string // one of Kinds, or ctags' own name for a kind we do not map
	Path      string // relative to the workspace, '/'-separated
	Line      int
	Signature string // a function's parameters and result, when ctags read them
	Scope     string // the type or module it is defined in, if any
	lower     string // Name in lower case
}

func newSymbol(t tag, kind string) Symbol {
	s := Symbol{
		Name:      cut(t.Name, maxName),
		Kind:      kind,
		Line:      t.Line,
		Signature: cut(t.Signature, maxSignature),
		Scope:     cut(t.Scope, maxName),
	}
	s.lower = strings.ToLower(s.Name)
	if s.lower == s.Name {
		s.lower = s.Name // share the string
	}
	return s
}

// String renders the symbol as "path:line: kind scope.Name signature".
func (s Symbol) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s ", s.Path, s.Line, s.Kind)
	if s.Scope != "" {
		b.WriteString(s.Scope)
		b.WriteByte('.')
	}
	b.WriteString(s.Name)
	b.WriteString(s.Signature)
	return b.String()
}

// Match ranks: an exact name (ignoring case) first, then a prefix, then a
// substring; within a rank, names whose case matches the query exactly,
// then shorter names, then by path and line.
type rank int

const (
	rankExact rank = iota
	rankPrefix
	rankSubstring
	noMatch
)

func rankOf(lower, query string) rank {
	switch {
	case lower == query:
		return rankExact
	case strings.HasPrefix(lower, query):
		return rankPrefix
	case strings.Contains(lower, query):
		return rankSubstring
	}
	return noMatch
}

type hit struct {
	sym  *Symbol
	rank rank
	path string
}

func compareHits(query string) func(a, b hit) int {
	return func(a, b hit) int {
		if a.rank != b.rank {
			return int(a.rank) - int(b.rank)
		}
		ac, bc := strings.Contains(a.sym.Name, query), strings.Contains(b.sym.Name, query)
		if ac != bc {
			if ac {
				return -1
			}
			return 1
		}
		if d := len(a.sym.Name) - len(b.sym.Name); d != 0 {
			return d
		}
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return a.sym.Line - b.sym.Line
	}
}

// best keeps the limit best hits of a search, so a query matching most of
// a large tree sorts only what it shows.
func best(hits []hit, limit int, cmp func(a, b hit) int) []hit {
	if len(hits) > 4*limit {
		// Narrow by rank first: the best rank with enough hits bounds
		// the rest.
		var byRank [noMatch]int
		for _, h := range hits {
			byRank[h.rank]++
		}
		keep, n := rankSubstring, 0
		for r := rankExact; r < noMatch; r++ {
			if n += byRank[r]; n >= limit {
				keep = r
				break
			}
		}
		hits = slices.DeleteFunc(hits, func(h hit) bool { return h.rank > keep })
	}
	slices.SortFunc(hits, cmp)
	return hits[:min(len(hits), limit)]
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return s[:n] + "…"
}
