package verify

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// junitParser reads a JUnit XML report (pytest --junitxml, node --test's
// junit reporter) from the report file the step wrote. Each failed test
// becomes one finding naming its package and the test apart, placed at
// the failure's line in the test file when the report or its stack
// trace tells it.
type junitParser struct {
	collector
	// suitePackage takes a test's package from the suites around it
	// (node: the describe blocks) rather than its classname (pytest:
	// the module and class).
	suitePackage bool

	passed, failed, skipped int
	read, bad               bool
}

func newJUnitParser(suitePackage bool) func() Parser {
	return func() Parser { return &junitParser{suitePackage: suitePackage} }
}

// Line ignores the tool's console output: the report says it all, and
// the raw tail is kept for a failure the report does not explain.
func (p *junitParser) Line(Stream, []byte) {}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Line      string        `xml:"line,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitProblem `xml:"skipped"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Report walks the XML token by token, so suites may nest to any depth
// and test cases may sit outside any suite.
func (p *junitParser) Report(data []byte) {
	if data == nil {
		return
	}
	p.read = true
	dec := xml.NewDecoder(bytes.NewReader(data))
	var suites []string
	for {
		tok, err := dec.Token()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.bad = true
			}
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "testsuite":
				suites = append(suites, attr(t, "name"))
			case "testcase":
				var c junitCase
				if err := dec.DecodeElement(&c, &t); err != nil {
					p.bad = true
					return
				}
				p.testCase(c, suites)
			}
		case xml.EndElement:
			if t.Name.Local == "testsuite" && len(suites) > 0 {
				suites = suites[:len(suites)-1]
			}
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (p *junitParser) testCase(c junitCase, suites []string) {
	problem := c.Failure
	if problem == nil {
		problem = c.Error
	}
	switch {
	case problem != nil:
		p.failed++
	case c.Skipped != nil:
		p.skipped++
		return
	default:
		p.passed++
		return
	}
	pkg := c.Classname
	if p.suitePackage {
		pkg = strings.Join(suites, " > ")
	}
	f := Finding{Package: pkg, Test: c.Name, Rule: "test:" + c.Name, Message: failureMessage(problem)}
	f.File, f.Line, f.Col = failurePosition(c, problem.Text)
	p.add(f)
}

// failureMessage is what the failure says: its message attribute (an
// assertion's text), else the start of its body.
func failureMessage(pr *junitProblem) string {
	msg := strings.TrimSpace(pr.Message)
	if msg == "" {
		msg = strings.TrimSpace(pr.Text)
		if lines := strings.SplitN(msg, "\n", 6); len(lines) > 5 {
			msg = strings.Join(lines[:5], "\n")
		}
	}
	if msg == "" {
		msg = "failed"
	}
	if pr.Type != "" && !strings.Contains(msg, pr.Type) && pr.Type != "testCodeFailure" {
		msg = pr.Type + ": " + msg
	}
	return msg
}

// tracePosition finds "file:line[:col]" in a failure's body: pytest's
// "tests/test_x.py:9: AssertionError", a JavaScript stack frame
// "(file:///app/test/x.test.js:11:12)".
var tracePosition = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(?:file://)?((?:/|\.{0,2}[\w.-]+/)?[\w./@+-]*\.[A-Za-z]+):(\d+)(?::(\d+))?`)
})

// failurePosition places a failed test: at the last position in its
// trace inside its own file when the report names the file (pytest's
// traceback ends at the failing line), else at the first position in a
// file of the project (a stack's innermost frame in user code), else at
// the test's own line.
func failurePosition(c junitCase, trace string) (file string, line, col int) {
	var first, last []string
	for _, m := range tracePosition().FindAllStringSubmatch(trace, 200) {
		name := m[1]
		if strings.HasPrefix(name, "node:") || strings.Contains(name, "/node_modules/") || strings.Contains(name, "node:internal") {
			continue
		}
		if c.File != "" {
			if name == c.File || strings.HasSuffix(name, "/"+c.File) {
				last = m
			}
			continue
		}
		if first == nil && strings.HasPrefix(m[0], "file://") {
			first = m
		}
	}
	m := last
	if m == nil {
		m = first
	}
	if m != nil {
		line, _ = strconv.Atoi(m[2])
		col, _ = strconv.Atoi(m[3])
		return m[1], line, col
	}
	if c.File != "" {
		// pytest's xunit1 line is the test function's, counted from 0.
		if n, err := strconv.Atoi(c.Line); err == nil && n >= 0 {
			return c.File, n + 1, 0
		}
		return c.File, 0, 0
	}
	return "", 0, 0
}

func (p *junitParser) Finish(int) Outcome {
	if !p.read {
		return p.outcome("no test report was written")
	}
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", p.passed, p.failed, p.skipped)
	if p.bad {
		s += "; the test report was cut short or is not valid XML"
	}
	return p.outcome(s)
}
