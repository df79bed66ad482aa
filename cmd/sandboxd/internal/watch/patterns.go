package watch

import (
	"fmt"
	"regexp"
)

// Bounds on the patterns a watch takes: every line is matched against
// each one, so their number and size bound the work per line.
const (
	MaxPatterns   = 32
	MaxPatternLen = 512
)

// Compile validates and compiles error patterns (Go regexp syntax).
func Compile(patterns []string) ([]*regexp.Regexp, error) {
	if len(patterns) > MaxPatterns {
		return nil, fmt.Errorf("error_patterns: %d patterns, at most %d are allowed", len(patterns), MaxPatterns)
	}
	res := make([]*regexp.Regexp, 0, len(patterns))
	for i, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("error_patterns[%d]: empty pattern (it would match every line)", i)
		}
		if len(p) > MaxPatternLen {
			return nil, fmt.Errorf("error_patterns[%d]: %d bytes long, at most %d are allowed", i, len(p), MaxPatternLen)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("error_patterns[%d]: %w", i, err)
		}
		res = append(res, re)
	}
	return res, nil
}
