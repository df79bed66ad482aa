package layers

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayoutDocumented: docs/development.md's layout names every
// package of the three modules, and nothing else.
func TestLayoutDocumented(t *testing.T) {
	var want []string
	for _, dir := range []string{".", "promptkit", "promptkit/arena"} {
		for _, p := range list(t, dir) {
			want = append(want, rel(p.ImportPath))
		}
	}
	got := codeBlockPaths(t, "docs/development.md", "## Layout")
	compare(t, "docs/development.md's layout", got, want)
}

// TestPublicPackagesDocumented: docs/go-api.md's table of public
// packages lists exactly the packages another module can import: not
// under an internal/ directory, not a command, with code to import.
func TestPublicPackagesDocumented(t *testing.T) {
	var want []string
	for _, dir := range []string{".", "promptkit", "promptkit/arena"} {
		for _, p := range list(t, dir) {
			r := rel(p.ImportPath)
			if p.Name == "main" || len(p.GoFiles) == 0 || r == "internal" ||
				strings.HasPrefix(r, "internal/") || strings.Contains(r, "/internal/") {
				continue
			}
			want = append(want, r)
		}
	}
	got := tablePaths(t, "docs/go-api.md", "## Public packages")
	compare(t, "docs/go-api.md's public packages", got, want)
}

func rel(importPath string) string {
	r, _ := relative(importPath)
	return r
}

func compare(t *testing.T, what string, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s leaves out %s", what, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s lists %s, which is no such package", what, g)
		}
	}
	slices.Sort(got)
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Errorf("%s lists %s twice", what, got[i])
		}
	}
}

// section returns the lines of the section of doc (relative to the
// repository's root) that starts with heading, up to the next heading
// of its level.
func section(t *testing.T, doc, heading string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root(t), doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	level := heading[:strings.IndexByte(heading, ' ')+1]
	var lines []string
	in, fenced := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		switch {
		case line == heading:
			in = true
			continue
		case in && !fenced && strings.HasPrefix(line, level):
			return lines
		}
		if in {
			lines = append(lines, line)
		}
	}
	if !in {
		t.Fatalf("%s has no section %q", doc, heading)
	}
	return lines
}

// codeBlockPaths is the first word of each line in the section's code
// blocks that does not start with a space (a continuation).
func codeBlockPaths(t *testing.T, doc, heading string) []string {
	var paths []string
	fenced := false
	for _, line := range section(t, doc, heading) {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced && line != "" && line[0] != ' ' {
			paths = append(paths, strings.Fields(line)[0])
		}
	}
	return paths
}

// tablePaths is the first cell of each row of the section's table, a
// path in backquotes.
func tablePaths(t *testing.T, doc, heading string) []string {
	var paths []string
	for _, line := range section(t, doc, heading) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		cell := strings.TrimSpace(cells[1])
		if p, ok := strings.CutPrefix(cell, "`"); ok {
			paths = append(paths, strings.TrimSuffix(p, "`"))
		}
	}
	return paths
}
