package verify

import (
	"encoding/json"
	"fmt"
	"strings"
)

// staticcheckParser reads staticcheck -f json: one JSON object per line.
// A package that does not compile comes as code "compile" with the
// compiler's text, positions and all, in the message.
type staticcheckParser struct {
	collector
	bad int
}

func newStaticcheckParser() Parser { return &staticcheckParser{} }

type staticcheckProblem struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Location struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
	} `json:"location"`
	Message string `json:"message"`
}

func (p *staticcheckParser) Line(stream Stream, line []byte) {
	if stream != Stdout || len(line) == 0 || line[0] != '{' {
		return
	}
	var prob staticcheckProblem
	if err := json.Unmarshal(line, &prob); err != nil {
		p.bad++
		return
	}
	if prob.Code == "compile" && prob.Location.File == "" {
		p.compileMessage(prob.Message)
		return
	}
	sev := SeverityError
	if prob.Severity == "warning" {
		sev = SeverityWarning
	}
	p.add(Finding{
		File: prob.Location.File, Line: max(prob.Location.Line, 0), Col: max(prob.Location.Column, 0),
		Rule: prob.Code, Message: prob.Message, Severity: sev,
	})
}

func (p *staticcheckParser) compileMessage(msg string) {
	found := false
	pkg := ""
	for _, line := range strings.Split(msg, "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			pkg = h
			continue
		}
		if f, ok := parsePosition(line); ok {
			f.Rule = "compile"
			p.add(f)
			found = true
		}
	}
	if !found {
		p.add(Finding{Package: pkg, Rule: "compile", Message: msg})
	}
}

func (p *staticcheckParser) Finish(int) Outcome {
	var summary string
	if p.bad > 0 {
		summary = fmt.Sprintf("%d unreadable lines in staticcheck's output", p.bad)
	}
	return p.outcome(summary)
}
