package verify

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// lineParser reads tools that print one "file:line[:col]: message" line
// per problem (pyflakes, flake8, mypy); classify turns the message into
// the finding's rule and severity, and may drop the line.
type lineParser struct {
	collector
	classify func(f *Finding) bool
}

func (p *lineParser) Line(_ Stream, line []byte) {
	f, ok := parsePosition(string(line))
	if !ok {
		return
	}
	if p.classify(&f) {
		p.add(f)
	}
}

func (p *lineParser) Finish(int) Outcome { return p.outcome("") }

// newPyflakesParser: pyflakes does not name its checks.
func newPyflakesParser() Parser {
	return &lineParser{classify: func(f *Finding) bool { f.Rule = "pyflakes"; return true }}
}

// flake8Code is the code flake8 puts first in its message: F401, E501.
var flake8Code = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Z]+\d+) (.*)$`) })

// newFlake8Parser: pycodestyle's warnings (W) and style errors (E, C)
// are warnings; pyflakes' (F) are errors.
func newFlake8Parser() Parser {
	return &lineParser{classify: func(f *Finding) bool {
		if m := flake8Code().FindStringSubmatch(f.Message); m != nil {
			f.Rule, f.Message = m[1], m[2]
			if !strings.HasPrefix(f.Rule, "F") {
				f.Severity = SeverityWarning
			}
		}
		return true
	}}
}

// mypyLevel and mypyCode split "error: message  [code]".
var (
	mypyLevel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(error|warning|note): (.*)$`) })
	mypyCode  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)\s+\[([a-z0-9-]+)\]$`) })
)

// newMypyParser reads mypy --show-column-numbers --show-error-codes;
// notes explain the error before them and are left out.
func newMypyParser() Parser {
	return &lineParser{classify: func(f *Finding) bool {
		m := mypyLevel().FindStringSubmatch(f.Message)
		if m == nil || m[1] == "note" {
			return false
		}
		if m[1] == "warning" {
			f.Severity = SeverityWarning
		}
		f.Rule, f.Message = "mypy", m[2]
		if c := mypyCode().FindStringSubmatch(f.Message); c != nil {
			f.Message, f.Rule = c[1], c[2]
		}
		return true
	}}
}

// tscParser reads tsc --pretty false: "file(line,col): error TS2322:
// message", a message's further lines indented below it, and errors
// about the whole project without a position ("error TS5057: ...").
type tscParser struct {
	collector
	last *Finding
}

func newTscParser() Parser { return &tscParser{} }

var (
	tscLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$`)
	})
	tscGlobal = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(error|warning) (TS\d+): (.*)$`) })
)

func (p *tscParser) Line(stream Stream, line []byte) {
	s := string(line)
	if m := tscLine().FindStringSubmatch(s); m != nil {
		ln, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		p.push(Finding{File: m[1], Line: ln, Col: col, Rule: m[5], Message: m[6], Severity: tscSeverity(m[4])})
		return
	}
	if m := tscGlobal().FindStringSubmatch(s); m != nil {
		p.push(Finding{Rule: m[2], Message: m[3], Severity: tscSeverity(m[1])})
		return
	}
	if p.last != nil && strings.HasPrefix(s, " ") && len(p.last.Message) < maxMessage {
		p.last.Message += "\n" + strings.TrimSpace(s)
	}
}

// push holds a finding back until its continuation lines are read.
func (p *tscParser) push(f Finding) {
	p.flush()
	p.last = &f
}

func (p *tscParser) flush() {
	if p.last != nil {
		p.add(*p.last)
		p.last = nil
	}
}

func tscSeverity(level string) Severity {
	if level == "warning" {
		return SeverityWarning
	}
	return SeverityError
}

func (p *tscParser) Finish(int) Outcome {
	p.flush()
	return p.outcome("")
}

// eslintParser reads eslint -f json: one JSON array of files and their
// messages, printed whole on stdout.
type eslintParser struct {
	collector
	out       []byte
	truncated bool
}

func newESLintParser() Parser { return &eslintParser{} }

func (p *eslintParser) Line(stream Stream, line []byte) {
	if stream != Stdout {
		return
	}
	if len(p.out)+len(line) > maxReport {
		p.truncated = true
		return
	}
	p.out = append(p.out, line...)
	p.out = append(p.out, '\n')
}

type eslintFile struct {
	FilePath string `json:"filePath"`
	Messages []struct {
		RuleID   *string `json:"ruleId"`
		Severity int     `json:"severity"`
		Message  string  `json:"message"`
		Line     int     `json:"line"`
		Column   int     `json:"column"`
	} `json:"messages"`
}

func (p *eslintParser) Finish(int) Outcome {
	if len(strings.TrimSpace(string(p.out))) == 0 {
		return p.outcome("")
	}
	var files []eslintFile
	if err := json.Unmarshal(p.out, &files); err != nil {
		return p.outcome(fmt.Sprintf("eslint's JSON output is unreadable: %v", truncate(err.Error(), 200)))
	}
	summary := ""
	if p.truncated {
		summary = "eslint's output was cut short"
	}
	for _, file := range files {
		for _, m := range file.Messages {
			rule := "syntax" // a parse error has no rule
			if m.RuleID != nil {
				rule = *m.RuleID
			}
			sev := SeverityError
			if m.Severity == 1 {
				sev = SeverityWarning
			}
			p.add(Finding{File: file.FilePath, Line: max(m.Line, 0), Col: max(m.Column, 0), Rule: rule, Message: m.Message, Severity: sev})
		}
	}
	return p.outcome(summary)
}
