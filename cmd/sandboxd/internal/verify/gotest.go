package verify

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Bounds on what the go test parser remembers, whatever the output.
const (
	maxTracked      = 10000 // packages, builds or running tests tracked at once
	maxTestLocated  = 50    // located lines kept per running test
	maxRecentLines  = 5     // unlocated output lines kept per test or package
	maxBuildRaw     = 10    // unlocated build output lines kept per package
	maxListedBuilds = 20    // packages named in the summary
)

// goTestParser reads go test -json: test2json events on stdout (build
// output included, since Go 1.24), and the go command's own errors on
// stderr.
type goTestParser struct {
	collector
	tests bool // count and report tests (run_tests) or only builds (run_typecheck)

	builds  map[string]*buildState
	running map[testKey]*testState
	pkgs    map[string]*pkgState

	passed, failed, skipped  int
	failedTests, passedTests []TestID
	failedBuilds             []string
	seenFailedBuild          map[string]bool
	unreadable               int
}

type testKey struct{ pkg, test string }

type buildState struct {
	vet   bool // the current "# [pkg]" section is go test's vet check
	found int
	raw   []string
}

type testState struct {
	located []Finding
	indent  int // of the last located line; deeper lines continue it
	recent  []string
	panic   string
}

type pkgState struct {
	failedTests int
	recent      []string
	panic       string
}

type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
	Elapsed     float64
}

func newGoTestParser(tests bool) func() Parser {
	return func() Parser {
		return &goTestParser{
			tests:           tests,
			builds:          map[string]*buildState{},
			running:         map[testKey]*testState{},
			pkgs:            map[string]*pkgState{},
			seenFailedBuild: map[string]bool{},
		}
	}
}

func (p *goTestParser) Line(stream Stream, line []byte) {
	if stream == Stderr {
		// The go command's own failures: a broken go.mod, a bad flag.
		if f, ok := parsePosition(string(line)); ok {
			f.Rule = "build"
			p.add(f)
		}
		return
	}
	if len(line) == 0 || line[0] != '{' {
		return
	}
	var ev testEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		p.unreadable++
		return
	}
	switch {
	case ev.ImportPath != "":
		p.buildEvent(ev)
	case ev.Test != "":
		p.testEvent(ev)
	case ev.Package != "":
		p.packageEvent(ev)
	}
}

// basePackage strips the test variant: "p [p.test]" is p.
func basePackage(importPath string) string {
	pkg, _, _ := strings.Cut(importPath, " ")
	return pkg
}

func (p *goTestParser) buildEvent(ev testEvent) {
	b := p.builds[ev.ImportPath]
	if b == nil {
		if len(p.builds) >= maxTracked {
			return
		}
		b = &buildState{}
		p.builds[ev.ImportPath] = b
	}
	pkg := basePackage(ev.ImportPath)
	switch ev.Action {
	case "build-output":
		for _, line := range strings.Split(strings.TrimRight(ev.Output, "\n"), "\n") {
			if h, ok := strings.CutPrefix(line, "# "); ok {
				// go test vets before it runs, and puts the vet output
				// under "# [pkg]".
				b.vet = strings.HasPrefix(h, "[")
				continue
			}
			if f, ok := parsePosition(line); ok {
				f.Rule, f.Package = "compile", pkg
				if b.vet {
					f.Rule = "vet"
				}
				p.add(f)
				b.found++
				continue
			}
			if strings.TrimSpace(line) != "" && len(b.raw) < maxBuildRaw {
				b.raw = append(b.raw, line)
			}
		}
	case "build-fail":
		if b.found == 0 {
			msg := "build failed"
			if len(b.raw) > 0 {
				msg = strings.Join(b.raw, "\n")
			}
			p.add(Finding{Package: pkg, Rule: "build", Message: msg})
		}
		delete(p.builds, ev.ImportPath)
	}
}

// locatedLine is how testing prints t.Error and t.Log: indented
// "file.go:line: message" (a full path under -fullpath).
var locatedLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s+)(\S.*?\.go):(\d+): ?(.*)$`) })

func (p *goTestParser) testEvent(ev testEvent) {
	key := testKey{ev.Package, ev.Test}
	t := p.running[key]
	if t == nil {
		if len(p.running) >= maxTracked {
			return
		}
		t = &testState{}
		p.running[key] = t
	}
	switch ev.Action {
	case "output":
		t.output(ev.Output)
	case "pass":
		p.passed++
		p.passedTests = track(p.passedTests, ev.Package, ev.Test)
		delete(p.running, key)
	case "skip":
		p.skipped++
		p.passedTests = track(p.passedTests, ev.Package, ev.Test)
		delete(p.running, key)
	case "fail":
		p.failed++
		p.failedTests = track(p.failedTests, ev.Package, ev.Test)
		p.pkg(ev.Package).failedTests++
		p.reportTest(ev, t)
		delete(p.running, key)
	}
}

func (t *testState) output(out string) {
	line := strings.TrimRight(out, "\r\n")
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "=== ") || strings.HasPrefix(trimmed, "--- ") {
		return
	}
	if m := locatedLine().FindStringSubmatch(line); m != nil {
		if f, ok := parsePosition(m[2] + ":" + m[3] + ": " + m[4]); ok && len(t.located) < maxTestLocated {
			t.located = append(t.located, f)
			t.indent = len(m[1])
			return
		}
	}
	indent := len(line) - len(strings.TrimLeft(line, " \t"))
	if n := len(t.located); n > 0 && indent > t.indent {
		// A message over several lines: testing indents the rest deeper.
		if last := &t.located[n-1]; len(last.Message) < maxMessage {
			last.Message += "\n" + trimmed
		}
		return
	}
	t.indent = 1 << 30 // unlocated output ends any message being continued
	if t.panic == "" && strings.HasPrefix(trimmed, "panic: ") {
		t.panic = trimmed
	}
	t.recent = keepRecent(t.recent, trimmed)
}

func keepRecent(recent []string, line string) []string {
	if len(recent) == maxRecentLines {
		copy(recent, recent[1:])
		recent = recent[:len(recent)-1]
	}
	return append(recent, truncate(line, 500))
}

// reportTest adds a failed test's located lines and one finding naming
// the test itself, so every failure is listed even when it printed
// nothing with a position (a panic, a timeout, a failed subtest).
func (p *goTestParser) reportTest(ev testEvent, t *testState) {
	rule := "test:" + ev.Test
	for _, f := range t.located {
		f.Rule, f.Package, f.Test = rule, ev.Package, ev.Test
		p.add(f)
	}
	msg := fmt.Sprintf("FAIL (%.2fs)", ev.Elapsed)
	switch {
	case t.panic != "":
		msg += ": " + t.panic
	case len(t.located) == 0 && len(t.recent) > 0:
		msg += ": " + strings.Join(t.recent, "\n")
	}
	p.add(Finding{Package: ev.Package, Test: ev.Test, Rule: rule, Message: msg})
}

func (p *goTestParser) pkg(name string) *pkgState {
	s := p.pkgs[name]
	if s == nil {
		s = &pkgState{}
		if len(p.pkgs) < maxTracked {
			p.pkgs[name] = s
		}
	}
	return s
}

// packageEvent handles what belongs to no test: the package's result and
// what it printed outside any test (TestMain, init, a timeout's panic).
func (p *goTestParser) packageEvent(ev testEvent) {
	s := p.pkg(ev.Package)
	switch ev.Action {
	case "output":
		line := strings.TrimSpace(ev.Output)
		if line == "" || line == "PASS" || line == "FAIL" || packageResultLine(line) {
			return
		}
		if s.panic == "" && strings.HasPrefix(line, "panic: ") {
			s.panic = line
		}
		s.recent = keepRecent(s.recent, line)
	case "fail":
		if ev.FailedBuild != "" {
			if !p.seenFailedBuild[ev.Package] && len(p.seenFailedBuild) < maxTracked {
				p.seenFailedBuild[ev.Package] = true
				p.failedBuilds = append(p.failedBuilds, ev.Package)
			}
			return
		}
		if s.failedTests == 0 {
			msg := "package failed outside any test"
			switch {
			case s.panic != "":
				msg += ": " + s.panic
			case len(s.recent) > 0:
				msg += ": " + strings.Join(s.recent, "\n")
			}
			p.add(Finding{Package: ev.Package, Rule: "test", Message: msg})
		}
	}
}

// packageResultLine is go test's per-package verdict ("ok  \tpkg\t0.1s",
// "FAIL\tpkg [build failed]", "?   \tpkg\t[no test files]").
func packageResultLine(line string) bool {
	for _, prefix := range []string{"ok ", "ok\t", "FAIL\t", "?   \t", "testing: warning: no tests to run"} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

func (p *goTestParser) Finish(exitCode int) Outcome {
	if exitCode < 0 {
		// Killed: whatever was still running is what hung.
		keys := make([]testKey, 0, len(p.running))
		for k := range p.running {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i].pkg < keys[j].pkg || keys[i].pkg == keys[j].pkg && keys[i].test < keys[j].test
		})
		for _, k := range keys {
			p.add(Finding{Package: k.pkg, Test: k.test, Rule: "test:" + k.test, Message: "still running when the command was stopped"})
			p.failedTests = track(p.failedTests, k.pkg, k.test)
		}
	}
	var parts []string
	if p.tests {
		parts = append(parts, fmt.Sprintf("%d passed, %d failed, %d skipped", p.passed, p.failed, p.skipped))
	}
	if n := len(p.failedBuilds); n > 0 {
		sort.Strings(p.failedBuilds)
		listed := p.failedBuilds[:min(n, maxListedBuilds)]
		s := fmt.Sprintf("%d %s failed to build: %s", n, plural(n, "package", "packages"), strings.Join(listed, ", "))
		if n > len(listed) {
			s += fmt.Sprintf(" and %d more", n-len(listed))
		}
		parts = append(parts, s)
	}
	if p.unreadable > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable JSON lines", p.unreadable))
	}
	o := p.outcome(strings.Join(parts, "; "))
	o.Failed, o.Passed = p.failedTests, p.passedTests
	return o
}

// track adds a test to list, up to maxTracked.
func track(list []TestID, pkg, test string) []TestID {
	if len(list) >= maxTracked {
		return list
	}
	return append(list, TestID{Package: pkg, Test: test})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
