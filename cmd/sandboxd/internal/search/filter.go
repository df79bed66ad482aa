package search

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globFilter is Grep's glob argument, read the way rg reads -g globs
// (which follow .gitignore): a leading '!' excludes, a glob without '/'
// matches file names at any depth, a leading '/' anchors, a trailing '/'
// means everything under a directory.
type globFilter struct {
	negate   bool
	anchored bool   // has a '/': matched against whole relative paths
	dir      bool   // ends in '/': matches what is under a directory
	name     string // the glob itself, for a file-name glob
	path     string // doublestar pattern for whole relative paths
}

// fileName reports whether the glob is on file names alone.
func (g globFilter) fileName() bool { return !g.anchored && !g.dir }

func parseGlobFilter(glob string) (globFilter, error) {
	var g globFilter
	rest, neg := strings.CutPrefix(glob, "!")
	g.negate = neg
	rest, lead := strings.CutPrefix(rest, "/")
	rest, g.dir = strings.CutSuffix(rest, "/")
	if rest == "" || strings.HasPrefix(rest, "/") || strings.HasSuffix(rest, "/") || !doublestar.ValidatePattern(rest) {
		return g, fmt.Errorf("invalid glob %q", glob)
	}
	g.anchored = lead || strings.Contains(rest, "/")
	g.name = rest
	g.path = rest
	if g.dir {
		g.path += "/**"
	}
	if !g.anchored {
		g.path = "**/" + g.path
	}
	return g, nil
}

// filter matches rg's output paths against the glob, relative to the
// search directory or to the workspace root (both read naturally: "*.go"
// under path "cmd", or "cmd/**/*.go" from the root).
func (g globFilter) filter(root string, t target) *pathFilter {
	f := &pathFilter{glob: g.path, negate: g.negate}
	if t.isDir && t.abs != root {
		f.prefixes = append(f.prefixes, t.abs+"/")
	}
	f.prefixes = append(f.prefixes, root+"/")
	return f
}

// pathFilter keeps the paths rg printed that match a glob. rg prints a
// file's lines together, so the last answer is remembered.
type pathFilter struct {
	glob     string
	negate   bool
	prefixes []string
	last     string
	lastKeep bool
}

func (f *pathFilter) keep(path []byte) bool {
	if len(path) > 0 && string(path) == f.last {
		return f.lastKeep
	}
	p := string(path)
	match := false
	for _, pre := range f.prefixes {
		if rel, ok := strings.CutPrefix(p, pre); ok && doublestar.MatchUnvalidated(f.glob, rel) {
			match = true
			break
		}
	}
	f.last, f.lastKeep = p, match != f.negate
	return f.lastKeep
}
