package verify

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// StepResult is how one step of a check went.
type StepResult struct {
	Tool     string
	Absent   bool // optional, and not installed
	Skipped  bool // not run: the time ran out before it
	ExitCode int
	TimedOut bool
	Timeout  time.Duration
	Outcome  Outcome
	// Tail is the end of the raw output, kept when the step failed and
	// nothing in its output could be read as a finding.
	Tail string
}

func (s StepResult) summary() string {
	var b strings.Builder
	b.WriteString(s.Tool)
	switch {
	case s.Absent:
		b.WriteString(" not installed, skipped")
		return b.String()
	case s.Skipped:
		fmt.Fprintf(&b, " not run: the %s timeout was used up", s.Timeout)
		return b.String()
	case s.TimedOut:
		fmt.Fprintf(&b, " timed out after %s and was killed", s.Timeout)
	default:
		fmt.Fprintf(&b, " exited %d", s.ExitCode)
	}
	if s.Outcome.Summary != "" {
		fmt.Fprintf(&b, " (%s)", s.Outcome.Summary)
	}
	return b.String()
}

// Report is a check's result: the findings of all its steps, deduplicated
// and sorted, and how each step went.
type Report struct {
	Check    string // "tests", "lint" or "typecheck"
	Project  string
	Steps    []StepResult
	Findings []Finding
	// Dropped counts findings the parsers could not keep.
	Dropped int
	// FailedTests and PassedTests name the tests that ran (tests only):
	// failed, or passed or skipped.
	FailedTests, PassedTests []TestID
	maxShown                 int
	seen                     map[string]bool
}

func (r *Report) add(s StepResult) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.Dropped += s.Outcome.Dropped
	r.FailedTests = append(r.FailedTests, s.Outcome.Failed...)
	r.PassedTests = append(r.PassedTests, s.Outcome.Passed...)
	for _, f := range s.Outcome.Findings {
		// staticcheck, for one, reports a compile error once per variant
		// of the package.
		if key := f.String(); !r.seen[key] {
			r.seen[key] = true
			r.Findings = append(r.Findings, f)
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return less(r.Findings[i], r.Findings[j]) })
	r.Steps = append(r.Steps, s)
}

// less puts findings with a file first, in file and position order, then
// the rest by package, each group keeping the order the tools gave.
func less(a, b Finding) bool {
	if (a.File == "") != (b.File == "") {
		return a.File != ""
	}
	if a.File != b.File {
		return a.File < b.File
	}
	if a.File == "" {
		return a.Package < b.Package
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// String renders the findings one per line, then a one-line summary,
// then the raw output tail of any step that failed unexplained.
func (r *Report) String() string {
	var b strings.Builder
	shown := r.Findings
	if r.maxShown > 0 && len(shown) > r.maxShown {
		shown = shown[:r.maxShown]
	}
	for _, f := range shown {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	if hidden := len(r.Findings) - len(shown) + r.Dropped; hidden > 0 {
		fmt.Fprintf(&b, "... and %d more %s not shown\n", hidden, plural(hidden, "finding", "findings"))
	}
	total := len(r.Findings) + r.Dropped
	parts := []string{"no findings"}
	if total > 0 {
		parts[0] = fmt.Sprintf("%d %s", total, plural(total, "finding", "findings"))
	}
	for _, s := range r.Steps {
		parts = append(parts, s.summary())
	}
	fmt.Fprintf(&b, "%s; %s [%s]\n", parts[0], strings.Join(parts[1:], "; "), r.Project)
	for _, s := range r.Steps {
		if s.Tail != "" {
			fmt.Fprintf(&b, "--- %s output (tail) ---\n%s", s.Tool, s.Tail)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Clean reports whether every step ran, exited 0 and found nothing.
func (r *Report) Clean() bool {
	if len(r.Findings) > 0 || r.Dropped > 0 {
		return false
	}
	for _, s := range r.Steps {
		if s.Skipped || s.TimedOut || s.ExitCode != 0 {
			return false
		}
	}
	return true
}
