package verify

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Output captured from go 1.26 and staticcheck 2026.2, trimmed.
const (
	capturedGoTest = `{"ImportPath":"example.com/vx [example.com/vx.test]","Action":"build-output","Output":"# example.com/vx\n"}
{"ImportPath":"example.com/vx [example.com/vx.test]","Action":"build-output","Output":"./a.go:6:14: cannot use \"s\" (untyped string constant) as int value in variable declaration\n"}
{"ImportPath":"example.com/vx [example.com/vx.test]","Action":"build-fail"}
{"ImportPath":"example.com/vx/c","Action":"build-output","Output":"# [example.com/vx/c]\n"}
{"ImportPath":"example.com/vx/c","Action":"build-output","Output":"c/c.go:5:24: fmt.Printf format %s has arg 1 of wrong type int\n"}
{"ImportPath":"example.com/vx/c","Action":"build-fail"}
{"Action":"fail","Package":"example.com/vx","FailedBuild":"example.com/vx [example.com/vx.test]"}
{"Action":"fail","Package":"example.com/vx/c","FailedBuild":"example.com/vx/c"}
{"Action":"start","Package":"example.com/vx/sub"}
{"Action":"run","Package":"example.com/vx/sub","Test":"TestFail"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestFail","Output":"=== RUN   TestFail\n"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestFail","Output":"    /w/sub/b_test.go:6: bad 1\n"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestFail","Output":"    /w/sub/b_test.go:7: multi\n"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestFail","Output":"        line\n"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestFail","Output":"--- FAIL: TestFail (0.00s)\n"}
{"Action":"fail","Package":"example.com/vx/sub","Test":"TestFail","Elapsed":0}
{"Action":"run","Package":"example.com/vx/sub","Test":"TestPass"}
{"Action":"output","Package":"example.com/vx/sub","Test":"TestPass","Output":"    /w/sub/b_test.go:9: logged, but the test passed\n"}
{"Action":"pass","Package":"example.com/vx/sub","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"example.com/vx/sub","Test":"TestSkip"}
{"Action":"skip","Package":"example.com/vx/sub","Test":"TestSkip","Elapsed":0}
{"Action":"output","Package":"example.com/vx/sub","Output":"FAIL\texample.com/vx/sub\t0.005s\n"}
{"Action":"fail","Package":"example.com/vx/sub","Elapsed":0.009}
{"Action":"output","Package":"example.com/vx/main","Output":"panic: init went wrong\n"}
{"Action":"fail","Package":"example.com/vx/main","Elapsed":0.009}
{"Action":"run","Package":"example.com/vx/sub","Test":"TestHangs"}
`
	capturedVet = `{
	"example.com/vx/c": {
		"printf": [
			{
				"posn": "/tmp/vx/c/c.go:5:24",
				"end": "/tmp/vx/c/c.go:5:26",
				"message": "fmt.Printf format %s has arg 1 of wrong type int"
			}
		],
		"unusedresult": {
			"error": "analysis failed"
		}
	}
}
{
	"example.com/vx/sub": {}
}
`
	capturedVetStderr   = "# example.com/vx/sub\n# [example.com/vx/sub]\nvet: sub/b.go:6:2: declared and not used: x\n"
	capturedStaticcheck = `{"code":"SA5009","severity":"error","location":{"file":"/tmp/vx/c/c.go","line":5,"column":23},"end":{"file":"/tmp/vx/c/c.go","line":5,"column":29},"message":"Printf format %s has arg #1 of wrong type int"}
{"code":"ST1003","severity":"warning","location":{"file":"/tmp/vx/c/c.go","line":7,"column":6},"message":"should not use underscores"}
{"code":"compile","severity":"error","location":{"file":"","line":0,"column":0},"end":{"file":"","line":0,"column":0},"message":"# example.com/vx/sub\nsub/b.go:6:2: declared and not used: x"}
{"code":"compile","severity":"error","location":{"file":"","line":0,"column":0},"message":"-: cannot load package"}
`
)

// feed runs text through p as the runner does, on one stream.
func feed(p Parser, stream Stream, text string) {
	w := &lineWriter{handle: func(line []byte) { p.Line(stream, line) }}
	w.Write([]byte(text))
	w.flush()
}

func strs(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func TestGoTestParser(t *testing.T) {
	p := newGoTestParser(true)()
	feed(p, Stdout, capturedGoTest)
	feed(p, Stderr, "go: warning: something\n")
	out := p.Finish(-1)
	want := []string{
		"./a.go:6:14: compile: cannot use \"s\" (untyped string constant) as int value in variable declaration",
		"c/c.go:5:24: vet: fmt.Printf format %s has arg 1 of wrong type int",
		"/w/sub/b_test.go:6: test:TestFail: bad 1",
		"/w/sub/b_test.go:7: test:TestFail: multi | line",
		"example.com/vx/sub: test:TestFail: FAIL (0.00s)",
		"example.com/vx/main: test: package failed outside any test: panic: init went wrong",
		"example.com/vx/sub: test:TestHangs: still running when the command was stopped",
	}
	if got := strs(out.Findings); !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want := "1 passed, 1 failed, 1 skipped; 2 packages failed to build: example.com/vx, example.com/vx/c"; out.Summary != want {
		t.Errorf("summary %q, want %q", out.Summary, want)
	}
}

func TestVetParser(t *testing.T) {
	p := newVetParser()
	feed(p, Stdout, capturedVet)
	feed(p, Stderr, capturedVetStderr)
	out := p.Finish(1)
	want := []string{
		"/tmp/vx/c/c.go:5:24: printf: fmt.Printf format %s has arg 1 of wrong type int",
		"example.com/vx/c: unusedresult: analyzer failed: analysis failed",
		"sub/b.go:6:2: compile: declared and not used: x",
	}
	if got := strs(out.Findings); !slices.Equal(got, want) || out.Summary != "" {
		t.Errorf("findings:\n%s\nsummary %q", strings.Join(got, "\n"), out.Summary)
	}
}

func TestStaticcheckParser(t *testing.T) {
	p := newStaticcheckParser()
	feed(p, Stdout, capturedStaticcheck)
	out := p.Finish(1)
	want := []string{
		"/tmp/vx/c/c.go:5:23: SA5009: Printf format %s has arg #1 of wrong type int",
		"/tmp/vx/c/c.go:7:6: ST1003: should not use underscores (warning)",
		"sub/b.go:6:2: compile: declared and not used: x",
		".: compile: -: cannot load package",
	}
	if got := strs(out.Findings); !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTruncatedJSON: output cut off mid-object is counted, not trusted.
func TestTruncatedJSON(t *testing.T) {
	p := newGoTestParser(true)()
	feed(p, Stdout, `{"Action":"run","Package":"p","Test":"TestA"}`+"\n"+`{"Action":"fail","Pack`)
	if out := p.Finish(1); out.Summary != "0 passed, 0 failed, 0 skipped; 1 unreadable JSON lines" {
		t.Errorf("summary %q", out.Summary)
	}
	v := newVetParser()
	feed(v, Stdout, capturedVet[:60])
	if out := v.Finish(1); len(out.Findings) != 0 || !strings.Contains(out.Summary, "1 unreadable") {
		t.Errorf("cut vet output: %+v", out)
	}
}

// TestParsersNeverPanic feeds every parser each captured output cut at
// every byte, then random bytes (200 inputs, 20 under -short), on both
// streams, and checks that what comes out stays within bounds.
func TestParsersNeverPanic(t *testing.T) {
	t.Parallel()
	random := 200
	if testing.Short() {
		random = 20
	}
	parsers := map[string]func() Parser{
		"go test": newGoTestParser(true), "vet": newVetParser, "staticcheck": newStaticcheckParser,
		"junit": newJUnitParser(false), "junit (suites)": newJUnitParser(true),
		"cargo": newCargoParser(false), "cargo test": newCargoParser(true),
		"pyflakes": newPyflakesParser, "flake8": newFlake8Parser, "mypy": newMypyParser,
		"tsc": newTscParser, "eslint": newESLintParser,
	}
	inputs := []string{capturedGoTest, capturedVet, capturedVetStderr, capturedStaticcheck,
		`<testsuites><testsuite name="s"><testcase classname="m" name="t" file="a.py" line="-3"><failure message="boom">a.py:99999999999999999999: E</failure></testcase></testsuite></testsuites>`,
		`<testcase name="x"><error>file:///a/b.js:1:2</error></testcase><testsuite><testsuite></testsuite>`,
		`{"reason":"compiler-message","message":{"message":"m","level":"error","code":{"code":"E1"},"spans":[{"file_name":"a.rs","line_start":-5,"column_start":-1,"is_primary":true}]}}`,
		"test a::b ... FAILED\n---- a::b stdout ----\nthread 'a::b' panicked at src/x.rs:99999999999999999999:1:\nboom\nfailures:\n",
		"a.ts(99999999999999999999,1): error TS1: m\n  more\nerror TS5: global",
		`[{"filePath":"a.js","messages":[{"ruleId":null,"severity":2,"message":"m","line":-1,"column":-2}]}]`,
		"a.py:1:2: error: m  [code]\na.py:3: note: n",
	}
	rng := rand.New(rand.NewSource(1))
	for range random {
		b := make([]byte, rng.Intn(400))
		rng.Read(b)
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs,
		"{"+strings.Repeat("\n\t{", 1000),
		`{"ImportPath":"x","Action":"build-output","Output":"a.go:99999999999999999999:1: big\n"}`,
		`{"Action":"fail","Package":"p","Test":"T","Elapsed":1e308}`,
		"x.go:1:2: \xff\xfe not utf-8",
		`{"code":"X","location":{"line":-5,"column":-1},"message":"neg"}`,
		"{\n\t\"p\": {\"a\": [{\"posn\": \"::::\", \"message\": \"m\"}]}\n}",
		"{\n\t\"p\": {\"a\": 7}\n}",
		"{\n\t\"p\": null\n}",
		`{"Action":"output","Package":"p","Test":"T","Output":"        continuation with no location before it"}`,
	)
	for name, newParser := range parsers {
		for _, in := range inputs {
			for cut := 0; cut <= len(in); cut += 1 + len(in)/300 {
				for _, stream := range []Stream{Stdout, Stderr} {
					p := newParser()
					feed(p, stream, in[:cut])
					if rr, ok := p.(ReportReader); ok {
						rr.Report([]byte(in[:cut]))
					}
					out := p.Finish(-1)
					for _, f := range out.Findings {
						if f.Line < 0 || f.Col < 0 || len(f.Message) > maxMessage+len("…") || strings.Contains(f.Message, "\n") {
							t.Fatalf("%s on %q: finding %+v", name, in[:cut], f)
						}
					}
				}
			}
		}
	}
}

func TestLineWriterBoundsLines(t *testing.T) {
	var lines []string
	w := &lineWriter{handle: func(l []byte) { lines = append(lines, string(l)) }}
	w.Write([]byte("a\r\nb"))
	w.Write([]byte(strings.Repeat("x", maxLine+10) + "\nc"))
	w.flush()
	if len(lines) != 3 || lines[0] != "a" || len(lines[1]) != maxLine || lines[1][0] != 'b' || lines[2] != "c" {
		t.Errorf("lines %d: %q...", len(lines), lines[0])
	}
}

func TestFindingString(t *testing.T) {
	for _, tc := range []struct {
		f    Finding
		want string
	}{
		{Finding{File: "a.go", Line: 3, Col: 7, Rule: "printf", Message: "m"}, "a.go:3:7: printf: m"},
		{Finding{File: "a.go", Line: 3, Rule: "test:TestX", Message: "m"}, "a.go:3: test:TestX: m"},
		{Finding{File: "a.go", Col: 3, Rule: "r", Message: "m"}, "a.go: r: m"},
		{Finding{Package: "example.com/p", Rule: "test:TestX", Message: "FAIL"}, "example.com/p: test:TestX: FAIL"},
		{Finding{File: "a.go", Line: 1, Message: "no rule"}, "a.go:1: no rule"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%+v = %q, want %q", tc.f, got, tc.want)
		}
	}
	long := oneLine(strings.Repeat("é", maxMessage))
	if !utf8.ValidString(long) || len(long) > maxMessage+len("…") {
		t.Errorf("a long message is cut to %d bytes, valid UTF-8 %v", len(long), utf8.ValidString(long))
	}
}

func TestSplitPosition(t *testing.T) {
	for in, want := range map[string]Finding{
		"/a/b.go:5:24":              {File: "/a/b.go", Line: 5, Col: 24},
		"/a:b/c.go:5:24":            {File: "/a:b/c.go", Line: 5, Col: 24},
		"/a/b.go:5":                 {File: "/a/b.go", Line: 5},
		"/a/b.go":                   {File: "/a/b.go"},
		"":                          {},
		"x:-1:2":                    {File: "x:-1", Line: 2},
		"x:999999999999999999999:1": {File: "x:999999999999999999999", Line: 1},
	} {
		file, line, col := splitPosition(in)
		if got := (Finding{File: file, Line: line, Col: col}); got != want {
			t.Errorf("splitPosition(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestPlacer(t *testing.T) {
	ws := fixture(t, map[string]string{"go.mod": goMod})
	pl := placer{cwd: ws.Dir() + "/sub", rel: ws.Rel}
	for in, want := range map[string]string{
		"./a.go":             "sub/a.go",
		"../b.go":            "b.go",
		ws.Dir() + "/c/d.go": "c/d.go",
		"/usr/lib/go/x.go":   "/usr/lib/go/x.go",
		"../../outside.go":   strings.TrimSuffix(ws.Dir()[:strings.LastIndex(ws.Dir(), "/")], "/") + "/outside.go",
		"":                   "",
	} {
		if got := pl.place(in); got != want {
			t.Errorf("place(%q) = %q, want %q", in, got, want)
		}
	}
}
