package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Defaults and bounds of the diagnostics Write and Edit append.
const (
	DefaultDiagnosticsTimeout = 5 * time.Second
	maxDiagnosticLines        = 50
	maxDiagnosticBytes        = 8 << 10
)

// diagnoseChanged checks the files a tool just changed and returns what
// to append to its result: their findings as file:line:col: rule:
// message, or that there were none, or nothing when no checker applies.
// It never fails the call, which has already changed the files: a
// checker that ran out of time or could not start is said so instead.
func (s *Server) diagnoseChanged(ctx context.Context, sp *space, paths ...string) string {
	timeout := s.cfg.DiagnosticsTimeout
	if timeout < 0 || len(paths) == 0 {
		return ""
	}
	if timeout == 0 {
		timeout = DefaultDiagnosticsTimeout
	}
	d := sp.verify.Diagnose(ctx, paths, timeout)
	if len(d.Tools) == 0 && d.Complete() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nDiagnostics")
	if len(d.Tools) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(distinct(d.Tools), ", "))
	}
	total := len(d.Findings) + d.Dropped
	if total == 0 {
		if d.Complete() {
			b.WriteString(": no problems found")
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, ": %d %s\n", total, plural(total, "finding", "findings"))
	}
	shown := 0
	for _, f := range d.Findings {
		line := f.String() + "\n"
		if shown == maxDiagnosticLines || b.Len()+len(line) > maxDiagnosticBytes {
			break
		}
		b.WriteString(line)
		shown++
	}
	if hidden := total - shown; hidden > 0 {
		fmt.Fprintf(&b, "... and %d more %s not shown\n", hidden, plural(hidden, "finding", "findings"))
	}
	for _, tool := range d.TimedOut {
		fmt.Fprintf(&b, "%s timed out after %s and was stopped: its findings are missing\n", tool, timeout)
	}
	for _, tool := range d.NotRun {
		fmt.Fprintf(&b, "%s not run: the %s diagnostics time limit was used up\n", tool, timeout)
	}
	for _, msg := range d.Failed {
		fmt.Fprintf(&b, "diagnostics failed: %s\n", msg)
	}
	return strings.TrimRight(b.String(), "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// distinct is names without repeats, in their order: a checker runs once
// per package, and a change across packages names it once.
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
