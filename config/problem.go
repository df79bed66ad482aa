package config

import (
	"strconv"
	"strings"
)

// Problem is one thing wrong with a RuntimeConfig, located so an editor can
// jump to it.
type Problem struct {
	// File is the config path as given to Load or Parse.
	File string
	// Line and Column are 1-based; zero when the position is unknown.
	Line, Column int
	// Entry names the part of the document at fault, as a dotted path
	// ("spec.hooks.pii_redactor"); empty for the document as a whole.
	Entry string
	Msg   string
	// Err is the error behind Msg when one was reported (a sandbox that
	// could not open); nil for a problem of the document itself.
	Err error
}

// Error formats the problem as "file:line:col: entry: msg", leaving out
// the parts that are unknown.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(":")
	}
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteString(":")
		if p.Column > 0 {
			b.WriteString(strconv.Itoa(p.Column))
			b.WriteString(":")
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if p.Entry != "" {
		b.WriteString(p.Entry)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is a RuntimeConfig that failed validation. It carries every problem
// found, not only the first, so a user fixes a config in one round.
type Error struct {
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors behind the problems that have one, so
// errors.Is(err, sandbox.ErrTransport) finds a sandbox that could not
// open for a reason of its own.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, p := range e.Problems {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return errs
}

// Add records more problems. It exists for checks that run after loading,
// such as a sandbox factory rejecting its config (see File.SandboxProblem).
func (e *Error) Add(p ...Problem) {
	e.Problems = append(e.Problems, p...)
}

// Err returns e when it holds problems and a nil error otherwise, so a
// caller collecting problems can return its result directly without
// producing a non-nil error interface that wraps an empty *Error.
func (e *Error) Err() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e
}

// SandboxProblem locates msg at the declaration of s in f.
func (f *File) SandboxProblem(s Sandbox, msg string) Problem {
	return Problem{File: f.Path, Line: s.Line, Column: s.Column, Entry: sandboxesKey + "." + s.Name, Msg: msg}
}

// HookProblem locates msg at the declaration of h in f.
func (f *File) HookProblem(h Hook, msg string) Problem {
	return Problem{File: f.Path, Line: h.Line, Column: h.Column, Entry: hooksKey + "." + h.Name, Msg: msg}
}
