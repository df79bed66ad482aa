package config

import (
	"fmt"
	"strings"
)

// unknownKey words the problem for a key that is not one of valid,
// suggesting the nearest valid key when it is plausibly a typo.
func unknownKey(name string, valid []string) string {
	best, bestDist := "", 3
	for _, v := range valid {
		if d := editDistance(name, v); d < bestDist && d < len([]rune(name)) {
			best, bestDist = v, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", name, best)
	}
	return fmt.Sprintf("unknown key %q (valid keys: %s)", name, strings.Join(valid, ", "))
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
