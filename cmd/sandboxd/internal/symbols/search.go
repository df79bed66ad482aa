package symbols

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DefaultLimit is how many symbols a search shows unless told otherwise;
// MaxLimit is the most it will.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// ErrBadKind says a kind filter names no kind we report.
var ErrBadKind = errors.New("unknown kind")

// Search brings the index up to date and returns the symbols whose name
// matches query (case-insensitive: exact, then prefix, then substring),
// best first, one per line, then a line saying how many matched.
func (x *Index) Search(ctx context.Context, query, kind string, limit int) (string, error) {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return "", errors.New("search_code: empty query")
	}
	keep, ok := kindFilter(kind)
	if !ok {
		return "", fmt.Errorf("search_code: %w %q; the kinds are %s (type takes every kind of type)", ErrBadKind, kind, strings.Join(Kinds, ", "))
	}
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 0 || limit > MaxLimit:
		return "", fmt.Errorf("search_code: limit %d: want 1 to %d", limit, MaxLimit)
	}

	select {
	case x.turn <- struct{}{}:
		defer func() { <-x.turn }()
	case <-ctx.Done():
		return "", fmt.Errorf("search_code: waiting for another query: %w", ctx.Err())
	}
	if err := x.refresh(ctx); err != nil {
		return "", fmt.Errorf("search_code: %w", err)
	}
	var hits []hit
	for _, e := range x.entries {
		for i := range e.syms {
			s := &e.syms[i]
			if r := rankOf(s.lower, q); r != noMatch && keep(s.Kind) {
				hits = append(hits, hit{sym: s, rank: r, path: e.rel})
			}
		}
	}
	total := len(hits)
	shown := best(hits, limit, compareHits(strings.TrimSpace(query)))

	var b strings.Builder
	for _, h := range shown {
		s := *h.sym
		s.Path = h.path
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	switch {
	case total == 0:
		fmt.Fprintf(&b, "No symbols match %q", strings.TrimSpace(query))
	case len(shown) < total:
		fmt.Fprintf(&b, "(showing %d of %d matches; narrow the query or filter by kind)", len(shown), total)
	default:
		fmt.Fprintf(&b, "(%d %s)", total, plural(total, "match", "matches"))
	}
	if kind != "" {
		fmt.Fprintf(&b, " [kind %s]", strings.ToLower(strings.TrimSpace(kind)))
	}
	if x.capped {
		fmt.Fprintf(&b, "\n(only the first %d files are indexed)", x.opts.MaxFiles)
	}
	if x.symCap {
		fmt.Fprintf(&b, "\n(the index holds at most %d symbols; some files' are left out)", x.opts.MaxSymbols)
	}
	if x.lastWarn != "" {
		fmt.Fprintf(&b, "\n(%d files could not be indexed and will be tried again: %s)", len(x.retry), firstLine(x.lastWarn))
	}
	return b.String(), nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
