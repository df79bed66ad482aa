package verify

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
)

// TestID names one test: the package it is in (as go test -json names
// it, an import path) and its full name, subtests after '/' as go test
// prints them (spaces already turned into '_').
type TestID struct {
	Package string
	Test    string
}

func (t TestID) String() string { return t.Package + " " + t.Test }

// Rerun runs exactly tests again: each package is tested once, with a
// -run pattern that selects its tests and nothing else, packages that
// need the same pattern together. A test whose subtests are listed too is
// run only as far as those subtests. req.Packages and req.Run are
// ignored; req.Timeout bounds the whole rerun.
func (v *Verifier) Rerun(ctx context.Context, req Request, tests []TestID) ([]*Report, error) {
	byPkg := map[string][]string{}
	for _, t := range tests {
		byPkg[t.Package] = append(byPkg[t.Package], t.Test)
	}
	byPattern := map[string][]string{}
	for pkg, names := range byPkg {
		for _, p := range runPatterns(names, maxPattern) {
			byPattern[p] = append(byPattern[p], pkg)
		}
	}
	patterns := make([]string, 0, len(byPattern))
	for p := range byPattern {
		patterns = append(patterns, p)
	}
	slices.Sort(patterns)
	deadline := time.Now().Add(timeoutOf(req))
	var reports []*Report
	for _, p := range patterns {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		pkgs := byPattern[p]
		slices.Sort(pkgs)
		r, err := v.Test(ctx, Request{Path: req.Path, Timeout: left, Packages: pkgs, Run: p, Env: req.Env, Progress: req.Progress})
		if err != nil {
			return reports, err
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// maxPattern bounds one -run pattern, well under the kernel's limit on
// one argument (128 KiB); more tests take more go test runs.
const maxPattern = 32 << 10

// RunPattern is the go test -run pattern that selects exactly the named
// tests (full names, subtests after '/'). Each level of a name is quoted
// and anchored, since go test matches each level apart; the names are
// joined by '|', which go test reads as "any of these paths". A name that
// is a parent of another is left out, so only the failing subtests of a
// test run, not all of them; the parent runs as far as they need.
func RunPattern(names []string) string {
	return strings.Join(alternatives(names), "|")
}

// runPatterns is RunPattern cut into patterns of at most max bytes (one
// longer alternative stands alone).
func runPatterns(names []string, max int) []string {
	var out []string
	var cur strings.Builder
	for _, a := range alternatives(names) {
		if cur.Len() > 0 && cur.Len()+1+len(a) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte('|')
		}
		cur.WriteString(a)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// alternatives quotes each name that is no other's parent.
func alternatives(names []string) []string {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	parents := map[string]bool{}
	for _, n := range names {
		for i := strings.LastIndexByte(n, '/'); i > 0; i = strings.LastIndexByte(n[:i], '/') {
			parents[n[:i]] = true
		}
	}
	var alts []string
	for _, n := range names {
		if parents[n] {
			continue // its listed subtests select it
		}
		levels := strings.Split(n, "/")
		for j, l := range levels {
			levels[j] = "^" + regexp.QuoteMeta(l) + "$"
		}
		alts = append(alts, strings.Join(levels, "/"))
	}
	return alts
}
