package workspace

import (
	"fmt"
	"strings"
)

// Limits on a path given to a Workspace. A path longer than PATH_MAX
// cannot be opened by name anyway, and one deeper than MaxPathDepth
// would have a single write create that many directories (one write of
// a 100 KB path made 50,000 before these limits).
const (
	MaxPathLen   = 4096 // bytes, as given; Linux's PATH_MAX
	MaxPathDepth = 64   // components below the workspace root
)

// LimitError is a path over MaxPathLen or MaxPathDepth. Its message
// quotes only the path's start.
type LimitError struct {
	Path  string
	Len   int // bytes
	Depth int // components below the root; 0 when the length refused it first
}

func (e *LimitError) Error() string {
	if e.Depth > MaxPathDepth {
		return fmt.Sprintf("path %s is %d directories deep; a workspace path may be at most %d", quoteStart(e.Path), e.Depth, MaxPathDepth)
	}
	return fmt.Sprintf("path %s is %d bytes long; a workspace path may be at most %d", quoteStart(e.Path), e.Len, MaxPathLen)
}

// checkLimits refuses path, whose cleaned form relative to the root is
// rel ("" when not yet known), when it is too long or too deep.
func checkLimits(path, rel string) error {
	if len(path) > MaxPathLen || len(rel) > MaxPathLen {
		return &LimitError{Path: path, Len: max(len(path), len(rel))}
	}
	if rel == "" || rel == "." {
		return nil
	}
	if depth := strings.Count(rel, "/") + 1; depth > MaxPathDepth {
		return &LimitError{Path: path, Len: len(path), Depth: depth}
	}
	return nil
}

// quoteStart quotes the first 64 bytes of s, and says how much more
// there is.
func quoteStart(s string) string {
	const n = 64
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes more)", s[:n], len(s)-n)
}
