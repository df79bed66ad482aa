package scrub

import "sync"

// Finding the patterns' triggers one by one costs a scan of the text per
// trigger, and with dozens of formats that is most of the time spent on
// ordinary text. triggerHits finds them all in one pass instead: a table
// of the first two bytes of every trigger (every case of them, for a
// folded one) rules out almost every position at the cost of a lookup.

type triggerRef struct {
	lit  string // lower-case when fold
	fold bool
	pat  int // index in patterns
}

// triggerTables index the patterns' triggers by their first two bytes.
type triggerTables struct {
	// pair[a][b] is set when some trigger may begin with a, b.
	pair [256][256]bool
	// byFirst lists the triggers that may begin with a byte.
	byFirst [256][]triggerRef
}

// triggers is built with the patterns, on first use.
var triggers = sync.OnceValue(func() *triggerTables {
	tt := &triggerTables{}
	for i, p := range patterns() {
		for _, t := range p.triggers {
			ref := triggerRef{lit: t, fold: p.fold, pat: i}
			firsts, seconds := []byte{t[0]}, []byte{t[1]}
			if p.fold {
				firsts, seconds = cases(t[0]), cases(t[1])
			}
			for _, a := range firsts {
				tt.byFirst[a] = append(tt.byFirst[a], ref)
				for _, b := range seconds {
					tt.pair[a][b] = true
				}
			}
		}
	}
	return tt
})

// cases is c and, for a letter, its other case.
func cases(c byte) []byte {
	switch {
	case 'a' <= c && c <= 'z':
		return []byte{c, c - 'a' + 'A'}
	case 'A' <= c && c <= 'Z':
		return []byte{c, c - 'A' + 'a'}
	}
	return []byte{c}
}

// hit is where a trigger of pattern pat begins.
type hit struct{ pos, pat int }

// triggerHits returns where the patterns' triggers occur in text, in
// order of position.
func triggerHits(text string) []hit {
	var hits []hit
	tt := triggers()
	for i := 0; i+1 < len(text); i++ {
		if !tt.pair[text[i]][text[i+1]] {
			continue
		}
		for _, t := range tt.byFirst[text[i]] {
			if hasPrefixAt(text, i, t.lit, t.fold) {
				hits = append(hits, hit{i, t.pat})
			}
		}
	}
	return hits
}

// hasPrefixAt reports whether text[i:] begins with lit, ignoring ASCII
// case when fold is set (lit is lower-case then).
func hasPrefixAt(text string, i int, lit string, fold bool) bool {
	if len(text)-i < len(lit) {
		return false
	}
	if !fold {
		return text[i:i+len(lit)] == lit
	}
	for j := 0; j < len(lit); j++ {
		c := text[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[j] {
			return false
		}
	}
	return true
}
