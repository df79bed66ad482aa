package verify

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// cargoParser reads cargo --message-format=json: one JSON object per
// line on stdout, of which "compiler-message" ones are rustc's (or
// clippy's) diagnostics. Under cargo test the test binaries' own text
// comes on stdout too, between the objects; with tests set it is read
// as libtest's report, one finding per failed test.
type cargoParser struct {
	collector
	tests bool

	bad int
	// targets are the test binaries cargo ran, in order, from its
	// "Running" and "Doc-tests" lines on stderr; binaries counts the
	// binaries' own "running N tests" lines on stdout. The two streams
	// reach the parser in no fixed order, so a failed test is tied to
	// the binary by its place in the order, resolved at Finish.
	targets                 []string
	binaries                int
	passed, failed, ignored int
	failedIn                map[string]int // failed test → its binary's index
	order                   []string
	current                 string // the test whose captured output is being read
	panics                  map[string]*rustPanic
}

type rustPanic struct {
	file      string
	line, col int
	message   []string
	done      bool
}

func newCargoParser(tests bool) func() Parser {
	return func() Parser {
		return &cargoParser{tests: tests, failedIn: map[string]int{}, panics: map[string]*rustPanic{}}
	}
}

type cargoMessage struct {
	Reason  string `json:"reason"`
	Message struct {
		Message string `json:"message"`
		Level   string `json:"level"`
		Code    *struct {
			Code string `json:"code"`
		} `json:"code"`
		Spans []struct {
			FileName    string `json:"file_name"`
			LineStart   int    `json:"line_start"`
			ColumnStart int    `json:"column_start"`
			IsPrimary   bool   `json:"is_primary"`
		} `json:"spans"`
	} `json:"message"`
}

func (p *cargoParser) Line(stream Stream, line []byte) {
	if stream == Stderr {
		p.stderrLine(string(line))
		return
	}
	if len(line) > 0 && line[0] == '{' {
		var m cargoMessage
		if err := json.Unmarshal(line, &m); err != nil {
			p.bad++
			return
		}
		if m.Reason == "compiler-message" {
			p.compilerMessage(m)
		}
		return
	}
	if p.tests {
		p.testLine(string(line))
	}
}

func (p *cargoParser) compilerMessage(m cargoMessage) {
	msg := m.Message
	sev := SeverityError
	switch msg.Level {
	case "error", "error: internal compiler error":
	case "warning":
		sev = SeverityWarning
	default:
		return // notes and help come as children of what they explain
	}
	rule := msg.Level
	if msg.Code != nil && msg.Code.Code != "" {
		rule = msg.Code.Code
	}
	f := Finding{Rule: rule, Message: msg.Message, Severity: sev}
	for _, s := range msg.Spans {
		if s.IsPrimary {
			f.File, f.Line, f.Col = s.FileName, max(s.LineStart, 0), max(s.ColumnStart, 0)
			break
		}
	}
	if f.File == "" && summaryLine(msg.Message) {
		return // "aborting due to 2 previous errors", "3 warnings emitted"
	}
	p.add(f)
}

var rustSummary = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(aborting due to|could not compile|\d+ warnings? emitted|.* generated \d+ warnings?)`)
})

func summaryLine(s string) bool { return rustSummary().MatchString(s) }

// runningLine is cargo's "Running unittests src/lib.rs (target/debug/deps/calc-0a1b)"
// and "Doc-tests calc".
var (
	runningLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*Running (?:unittests )?(\S+) \((.+)\)$`) })
	docTests    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*Doc-tests (\S+)$`) })
)

func (p *cargoParser) stderrLine(line string) {
	if m := runningLine().FindStringSubmatch(line); m != nil {
		bin := filepath.Base(m[2])
		if i := strings.LastIndexByte(bin, '-'); i > 0 {
			bin = bin[:i]
		}
		p.targets = append(p.targets, bin)
		return
	}
	if m := docTests().FindStringSubmatch(line); m != nil {
		p.targets = append(p.targets, m[1]+" (doc)")
	}
}

var (
	testResult   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^test (\S+(?: - .*)?) \.\.\. (ok|FAILED|ignored)`) })
	testCapture  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^---- (\S+(?: - .*)?) stdout ----$`) })
	testsRunning = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^running \d+ tests?$`) })
	panicAt      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^thread '([^']*)'(?: \(\d+\))? panicked at (.+?):(\d+):(\d+):?$`)
	})
)

// testLine reads libtest's report: a line per test, then each failed
// test's captured output, which holds where it panicked and why.
func (p *cargoParser) testLine(line string) {
	if testsRunning().MatchString(line) {
		p.binaries++
		return
	}
	if m := testResult().FindStringSubmatch(line); m != nil {
		switch m[2] {
		case "ok":
			p.passed++
		case "ignored":
			p.ignored++
		case "FAILED":
			p.failed++
			if _, seen := p.failedIn[m[1]]; !seen && len(p.failedIn) < maxTracked {
				p.failedIn[m[1]] = p.binaries - 1
				p.order = append(p.order, m[1])
			}
		}
		return
	}
	if m := testCapture().FindStringSubmatch(line); m != nil {
		p.current = m[1]
		if len(p.panics) < maxTracked {
			p.panics[p.current] = &rustPanic{}
		}
		return
	}
	if line == "failures:" || strings.HasPrefix(line, "test result: ") {
		p.current = ""
		return
	}
	pn := p.panics[p.current]
	if p.current == "" || pn == nil || pn.done {
		return
	}
	if m := panicAt().FindStringSubmatch(line); m != nil && pn.file == "" {
		pn.file = m[2]
		pn.line, _ = strconv.Atoi(m[3])
		pn.col, _ = strconv.Atoi(m[4])
		return
	}
	if pn.file == "" {
		return // the test's own prints before the panic
	}
	if strings.HasPrefix(line, "stack backtrace:") || strings.HasPrefix(line, "note: ") || len(pn.message) == maxRecentLines {
		pn.done = true
		return
	}
	if strings.TrimSpace(line) != "" {
		pn.message = append(pn.message, truncate(line, 500))
	}
}

func (p *cargoParser) Finish(int) Outcome {
	for _, name := range p.order {
		var target string
		if i := p.failedIn[name]; i >= 0 && i < len(p.targets) {
			target = p.targets[i]
		}
		f := Finding{Package: target, Test: name, Rule: "test:" + name, Message: "FAILED"}
		if pn := p.panics[name]; pn != nil && pn.file != "" {
			f.File, f.Line, f.Col = pn.file, pn.line, pn.col
			f.Message = "panicked"
			if len(pn.message) > 0 {
				f.Message += ": " + strings.Join(pn.message, "\n")
			}
		}
		p.add(f)
	}
	var parts []string
	if p.tests {
		parts = append(parts, fmt.Sprintf("%d passed, %d failed, %d ignored", p.passed, p.failed, p.ignored))
	}
	if p.bad > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable JSON lines", p.bad))
	}
	return p.outcome(strings.Join(parts, "; "))
}
