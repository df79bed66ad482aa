package search

import (
	"strings"
)

// nameGlob reports whether g, a glob on a file name, can be handed to rg
// as a file type meaning exactly what doublestar makes of it. rg's type
// definitions split on ':' and reject commas outside braces, nested or
// empty alternatives; escapes and character classes differ in corner
// cases between the two glob dialects, and '**' is a path glob. Anything
// refused here is matched by doublestar instead, which is always right,
// only slower.
func nameGlob(g string) bool {
	if g == "" || strings.ContainsAny(g, `:/\[]!`) || strings.Contains(g, "**") {
		return false
	}
	depth := 0
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '{':
			if depth > 0 {
				return false
			}
			depth++
			if i+1 < len(g) && (g[i+1] == ',' || g[i+1] == '}') {
				return false
			}
		case '}':
			if depth == 0 || g[i-1] == ',' {
				return false
			}
			depth--
		case ',':
			if depth == 0 || g[i-1] == ',' {
				return false
			}
		}
	}
	return depth == 0
}

// lastSegment is the part of a path glob that matches file names — after
// the last '/' outside braces — when it can serve as an rg type that
// narrows the listing before doublestar sees it.
func lastSegment(g string) (string, bool) {
	depth, slash := 0, -1
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			return "", false
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth == 0 {
				slash = i
			}
		}
	}
	seg := g[slash+1:]
	return seg, nameGlob(seg)
}
