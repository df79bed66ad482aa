package verify

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Severity grades a finding. Tools that do not grade theirs get
// SeverityError, since each one fails the check.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem a check reported. A finding tied to no file
// (a failed test, a package that failed for a reason without a position)
// names its Package instead. A finding about a test also names the test
// in Test, and its Rule is "test:" and the test's name.
type Finding struct {
	File     string // relative to the workspace once the Verifier has placed it
	Line     int    // 1-based; 0 when unknown
	Col      int    // 1-based; 0 when unknown
	Rule     string // "compile", a vet analyzer, a staticcheck code, "test:TestName"
	Message  string // one line
	Severity Severity
	Package  string // import path, module, crate or suite the finding belongs to
	// Test is the failed test's own name ("TestAdd", "tests::adds"),
	// apart from its Package, for findings about a test.
	Test string
}

// String renders f as "file:line:col: rule: message", leaving out what is
// unknown.
func (f Finding) String() string {
	var b strings.Builder
	switch {
	case f.File != "":
		b.WriteString(f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
			if f.Col > 0 {
				fmt.Fprintf(&b, ":%d", f.Col)
			}
		}
	case f.Package != "":
		b.WriteString(f.Package)
	default:
		b.WriteString(".")
	}
	b.WriteString(": ")
	if f.Rule != "" {
		b.WriteString(f.Rule)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	if f.Severity == SeverityWarning {
		b.WriteString(" (warning)")
	}
	return b.String()
}

// Limits on what one finding may hold: tool output is untrusted, and
// the agent's context is precious.
const (
	maxMessage = 2000
	maxPath    = 4096
)

// oneLine makes s fit on one rendered line: newlines become " | " so a
// multi-line message (a got/want diff) keeps its parts apart, and the
// whole is cut at maxMessage bytes on a rune boundary.
func oneLine(s string) string {
	s = strings.TrimRight(s, "\r\n \t")
	if strings.ContainsAny(s, "\r\n") {
		lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		s = strings.Join(lines, " | ")
	}
	return truncate(s, maxMessage)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut > n-4 && !startsRune(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// placer turns the file names a tool printed into workspace-relative
// ones. Tools print names relative to the directory they ran in, or
// absolute.
type placer struct {
	cwd string                       // absolute directory the command ran in
	rel func(string) (string, error) // workspace.Rel
}

func (p placer) place(file string) string {
	if file == "" {
		return ""
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.cwd, abs)
	}
	if rel, err := p.rel(abs); err == nil {
		return filepath.ToSlash(rel)
	}
	// Outside the workspace (GOROOT, the module cache): the absolute path
	// is the most useful thing to show.
	return filepath.Clean(abs)
}
