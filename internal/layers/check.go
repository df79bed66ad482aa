package layers

import (
	"fmt"
	"slices"
	"strings"
)

// Package is what the rules need of one package, as `go list -json`
// prints it.
type Package struct {
	ImportPath   string
	Name         string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// Check returns one line for each rule pkgs break: an import a package's
// layer may not make, a package no layer claims, or a dependency on a
// forbidden module. Deps is only looked at when set (go list -deps).
func Check(pkgs []Package) []string {
	var bad []string
	for _, p := range pkgs {
		rel, ok := ours(p.ImportPath)
		if !ok {
			continue
		}
		from := groupOf(rel)
		if from == "" {
			bad = append(bad, fmt.Sprintf("%s belongs to no layer: add it to a group in internal/layers/rules.go", rel))
			continue
		}
		bad = append(bad, refused(rel, from, p.Imports, false)...)
		bad = append(bad, beyondInitFirst(rel, p.Imports)...)
		tests := append(append([]string(nil), p.TestImports...), p.XTestImports...)
		bad = append(bad, refused(rel, from, tests, true)...)
		for _, d := range p.Deps {
			for _, m := range forbiddenModules {
				if d == m || strings.HasPrefix(d, m+"/") {
					bad = append(bad, fmt.Sprintf("%s depends on %s: the core module must not depend on %s", rel, d, m))
				}
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

func refused(rel, from string, imports []string, test bool) []string {
	var bad []string
	for _, imp := range imports {
		to, ok := ours(imp)
		if !ok || to == rel {
			continue
		}
		if !allowed(from, to, test) {
			what := "imports"
			if test {
				what = "has tests that import"
			}
			bad = append(bad, fmt.Sprintf("%s (%s) %s %s (%s)", rel, from, what, to, orNone(groupOf(to))))
		}
	}
	return bad
}

func orNone(g string) string {
	if g == "" {
		return "no layer"
	}
	return g
}

// beyondInitFirst reports the imports of an initFirst package that its
// list does not hold.
func beyondInitFirst(rel string, imports []string) []string {
	may, ok := initFirst[rel]
	if !ok {
		return nil
	}
	var bad []string
	for _, imp := range imports {
		if !slices.Contains(may, imp) {
			bad = append(bad, fmt.Sprintf("%s imports %s: it takes a process over from its initialiser, and may import only %s (initFirst in internal/layers/rules.go)",
				rel, imp, strings.Join(may, ", ")))
		}
	}
	return bad
}
