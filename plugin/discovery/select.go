package discovery

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
)

// ParseConstraint parses a version constraint in hashicorp/go-version
// syntax ("~> 1.2", ">= 1.0, < 2.0"). An empty string is no constraint:
// it returns nil Constraints, which every version satisfies.
//
// The semantics are go-version's, as in Terraform: "~>" allows the last
// segment given to grow, so "~> 1.2" is ">= 1.2, < 2.0" and "~> 1.2.0" is
// ">= 1.2.0, < 1.3.0"; a constraint without a prerelease never matches a
// prerelease version.
func ParseConstraint(s string) (version.Constraints, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	c, err := version.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf(`invalid version constraint %q: %w (want e.g. "~> 1.2" or ">= 1.0, < 2.0")`, s, err)
	}
	return c, nil
}

// Usable returns the usable candidates named name, newest first: the
// order in which a host should try them.
func (r *Result) Usable(name string) []Candidate {
	var out []Candidate
	for _, c := range r.Candidates {
		if c.Name == name && c.Usable() {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return newer(out[i].Version, out[j].Version) })
	return out
}

// newer orders versions newest first; a missing version (only in a
// hand-built Result) sorts last rather than panicking.
func newer(a, b *version.Version) bool {
	if a == nil || b == nil {
		return b == nil && a != nil
	}
	return a.GreaterThan(b)
}

// Select returns the newest usable version of plugin name that satisfies
// constraint (empty: any version). An empty name means any plugin, as
// long as only one plugin has a matching version: choosing between
// different plugins by version number would be arbitrary.
//
// A bad constraint is an error quoting it; no match is a *NotFoundError.
func (r *Result) Select(name, constraint string) (Candidate, error) {
	cons, err := ParseConstraint(constraint)
	if err != nil {
		return Candidate{}, err
	}
	names := []string{name}
	if name == "" {
		names = r.usableNames()
	}
	var chosen []Candidate
	for _, n := range names {
		for _, c := range r.Usable(n) {
			if c.Version != nil && cons.Check(c.Version) {
				chosen = append(chosen, c)
				break
			}
		}
	}
	switch len(chosen) {
	case 1:
		return chosen[0], nil
	case 0:
		return Candidate{}, r.notFound(name, constraint)
	}
	var which []string
	for _, c := range chosen {
		which = append(which, c.String())
	}
	return Candidate{}, fmt.Errorf("more than one plugin matches: %s; name the plugin", strings.Join(which, ", "))
}

func (r *Result) usableNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, c := range r.Candidates {
		if c.Usable() && !seen[c.Name] {
			seen[c.Name] = true
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	return names
}

func (r *Result) notFound(name, constraint string) *NotFoundError {
	e := &NotFoundError{Name: name, Constraint: constraint, Dirs: r.Dirs}
	names := []string{name}
	if name == "" {
		names = r.usableNames()
	}
	for _, n := range names {
		for _, c := range r.Usable(n) {
			v := "(no version)"
			if c.Version != nil {
				v = c.Version.String()
			}
			if name == "" {
				v = c.Name + " " + v
			}
			e.Available = append(e.Available, v)
		}
	}
	for _, c := range r.Candidates {
		if !c.Usable() && (name == "" || c.Name == name) {
			e.Refused = append(e.Refused, c.String()+": "+c.Refused)
		}
	}
	return e
}

// NotFoundError says no usable plugin matched, and what there was instead.
type NotFoundError struct {
	Name       string   // the plugin asked for; empty for any
	Constraint string   // the version constraint; empty for any
	Dirs       []string // the directories searched
	// Available are the usable versions of Name, newest first ("NAME
	// VERSION" entries when Name is empty).
	Available []string
	// Refused are the matching files that may not run, with the reason.
	Refused []string
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("no usable plugin")
	if e.Name != "" {
		fmt.Fprintf(&b, " %q", e.Name)
	}
	if e.Constraint != "" {
		fmt.Fprintf(&b, " matching %q", e.Constraint)
	}
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, "; available: %s", strings.Join(e.Available, ", "))
	}
	if len(e.Refused) > 0 {
		fmt.Fprintf(&b, "; refused: %s", strings.Join(e.Refused, "; "))
	}
	if len(e.Dirs) == 0 {
		b.WriteString("; no directories were searched")
	} else {
		fmt.Fprintf(&b, "; searched: %s", strings.Join(e.Dirs, ", "))
	}
	return b.String()
}
