package search

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// What the Grep glob must not do: rg checks -g globs before its ignore
// rules, so handing the user's glob to rg as -g would search gitignored
// files. This pins that behaviour of rg down.
func TestRipgrepGlobOverridesIgnores(t *testing.T) {
	f := newFixture(t, map[string]string{".gitignore": "secrets.env\n", "secrets.env": "KEY=secret"}, Options{})
	cmd := exec.Command(f.s.rg, "--no-config", "--no-require-git", "-l", "-g", "*.env", "KEY")
	cmd.Dir = f.dir
	out, _ := cmd.Output()
	if string(out) != "secrets.env\n" {
		t.Fatalf("rg -g '*.env' printed %q; the premise of Grep's glob handling has changed", out)
	}
}

// Every form of glob leaves ignored files (and .git) out, in every mode.
// Under -short each glob runs in one mode, taking the modes in turn, so
// every glob and every mode still run, at a third of the rg calls.
func TestGrepGlobNeverUnignores(t *testing.T) {
	globalIgnore(t)
	all := []string{".github/ci.yml", ".hidden.env", "cmd/main.go", "ok.env", "sub/a.go"}
	cases := []struct {
		glob, typ string
		want      []string
	}{
		{"", "", all},
		{"*", "", all},
		{"**", "", all},
		{"*.env", "", []string{".hidden.env", "ok.env"}},
		{"**/*.env", "", []string{".hidden.env", "ok.env"}},
		{"*.{env,log}", "", []string{".hidden.env", "ok.env"}},
		{"*.e[n]v", "", []string{".hidden.env", "ok.env"}},
		{"{secrets,ok}.env", "", []string{"ok.env"}},
		{"*.{env,{go,log}}", "", []string{".hidden.env", "cmd/main.go", "ok.env", "sub/a.go"}},
		{"secrets.env", "", nil},
		{"/secrets.env", "", nil},
		{"**/secrets.env", "", nil},
		{"*.log", "", nil},
		{"app.log", "", nil},
		{"*.bak", "", nil},
		{"excluded.txt", "", nil},
		{"**/*.go", "", []string{"cmd/main.go", "sub/a.go"}},
		{"cmd/*.go", "", []string{"cmd/main.go"}},
		{"/cmd/local.go", "", nil},
		{"gen/**", "", nil},
		{"gen/", "", nil},
		{"sub/**", "", []string{"sub/a.go"}},
		{"sub/deep/*.go", "", nil},
		{"deep/", "", nil},
		{"**/deep/**", "", nil},
		{"config", "", nil},
		{".git/**", "", nil},
		{"!*.go", "", []string{".github/ci.yml", ".hidden.env", "ok.env"}},
		{"!**/*.go", "", []string{".github/ci.yml", ".hidden.env", "ok.env"}},
		{"!cmd/", "", []string{".github/ci.yml", ".hidden.env", "ok.env", "sub/a.go"}},
		{"", "go", []string{"cmd/main.go", "sub/a.go"}},
		{"*.go", "go", []string{"cmd/main.go", "sub/a.go"}},
		{"!a.go", "go", []string{"cmd/main.go"}},
		{"sub/*", "go", []string{"sub/a.go"}},
		{"*.env", "go", nil},
	}
	for _, git := range []bool{false, true} {
		f := newFixture(t, ignoreTree, Options{})
		if git {
			f.gitInit(t)
		}
		for i, tc := range cases {
			modes := []string{modeFiles, modeCount, modeContent}
			if testing.Short() {
				modes = modes[i%len(modes) : i%len(modes)+1]
			}
			for _, mode := range modes {
				got, err := f.s.Grep(context.Background(), GrepRequest{Pattern: "KEY", Glob: tc.glob, Type: tc.typ, OutputMode: mode})
				want := []string{"No matches found"}
				if len(tc.want) > 0 {
					want = f.abs(tc.want...)
					for i := range want {
						switch mode {
						case modeCount:
							want[i] += ":1"
						case modeContent:
							want[i] += ":" + strings.TrimSpace(ignoreTree[tc.want[i]])
						}
					}
				}
				if err != nil || !slices.Equal(sorted(got), want) {
					t.Errorf("git=%v glob %q type %q %s:\n%s\n%v; want\n%s", git, tc.glob, tc.typ, mode, got, err, lines(want...))
				}
			}
		}
	}
}

var modeTree = map[string]string{
	"a.txt":     "alpha\nBeta\ngamma\nbeta\n",
	"b.go":      "package b\n// beta\n",
	"-x.txt":    "-x marks\n",
	"x/a.txt":   "m1\nc\nc\nc\nm2\n",
	"y/a.txt":   "m1\nc\nc\nc\nm2\n",
	"x/w:1.txt": "m:3\n",
}

func TestGrepModes(t *testing.T) {
	f := newFixture(t, modeTree, Options{})
	a, b := f.abs("a.txt")[0], f.abs("b.go")[0]
	for _, tc := range []struct {
		name string
		req  GrepRequest
		want string
	}{
		{"files default", GrepRequest{Pattern: "beta", Path: "."}, lines(a, b)},
		{"count", GrepRequest{Pattern: "beta", OutputMode: "count"}, lines(a+":1", b+":1")},
		{"count -i", GrepRequest{Pattern: "beta", OutputMode: "count", IgnoreCase: true}, lines(a+":2", b+":1")},
		{"content -n", GrepRequest{Pattern: "beta", Path: "a.txt", OutputMode: "content", LineNumbers: true}, a + ":4:beta"},
		{"content", GrepRequest{Pattern: "beta", Path: a, OutputMode: "content"}, a + ":beta"},
		{"content -i", GrepRequest{Pattern: "beta", Path: "a.txt", OutputMode: "content", LineNumbers: true, IgnoreCase: true}, lines(a+":2:Beta", a+":4:beta")},
		{"-C", GrepRequest{Pattern: "gamma", Path: "a.txt", OutputMode: "content", LineNumbers: true, Context: 1}, lines(a+"-2-Beta", a+":3:gamma", a+"-4-beta")},
		{"-A", GrepRequest{Pattern: "gamma", Path: "a.txt", OutputMode: "content", After: 1}, lines(a+":gamma", a+"-beta")},
		{"-B", GrepRequest{Pattern: "gamma", Path: "a.txt", OutputMode: "content", LineNumbers: true, Before: 2}, lines(a+"-1-alpha", a+"-2-Beta", a+":3:gamma")},
		{"context ignored by -l", GrepRequest{Pattern: "gamma", Path: "a.txt", Context: 3}, a},
		{"multiline", GrepRequest{Pattern: `alpha.Beta`, OutputMode: "content", LineNumbers: true, Multiline: true}, lines(a+":1:alpha", a+":2:Beta")},
		{"no multiline", GrepRequest{Pattern: `alpha.Beta`, OutputMode: "content"}, "No matches found"},
		{"type", GrepRequest{Pattern: "beta", Type: "go"}, b},
		{"no match", GrepRequest{Pattern: "zeta"}, "No matches found"},
		{"dash pattern", GrepRequest{Pattern: "-x", OutputMode: "content"}, f.abs("-x.txt")[0] + ":-x marks"},
		{"head_limit lines", GrepRequest{Pattern: "a", Path: "a.txt", OutputMode: "content", LineNumbers: true, HeadLimit: 2}, lines(a+":1:alpha", a+":2:Beta", "(showing the first 2 lines; head_limit cut the rest)")},
		{"head_limit not reached", GrepRequest{Pattern: "a", Path: "a.txt", OutputMode: "content", HeadLimit: 4}, lines(a+":alpha", a+":Beta", a+":gamma", a+":beta")},
		{"path glob -C", GrepRequest{Pattern: "m", Glob: "x/a.*", OutputMode: "content", Context: 1}, lines(
			f.dir+"/x/a.txt:m1", f.dir+"/x/a.txt-c", "--", f.dir+"/x/a.txt-c", f.dir+"/x/a.txt:m2")},
		{"path glob -C -n", GrepRequest{Pattern: "m", Glob: "**/x/a.txt", OutputMode: "content", Context: 1, LineNumbers: true}, lines(
			f.dir+"/x/a.txt:1:m1", f.dir+"/x/a.txt-2-c", "--", f.dir+"/x/a.txt-4-c", f.dir+"/x/a.txt:5:m2")},
		{"path glob odd name", GrepRequest{Pattern: "m:", Glob: "x/w*", OutputMode: "content", LineNumbers: true}, f.dir + "/x/w:1.txt:1:m:3"},
		{"path glob relative to path", GrepRequest{Pattern: "m", Path: "x", Glob: "/a.txt", OutputMode: "count"}, f.dir + "/x/a.txt:2"},
		{"path glob relative to root", GrepRequest{Pattern: "m", Path: "x", Glob: "x/a.txt"}, f.dir + "/x/a.txt"},
	} {
		got, err := f.s.Grep(context.Background(), tc.req)
		if err != nil || got != tc.want && !(strings.Contains(tc.want, "\n") && !strings.Contains(tc.want, "--") && slices.Equal(sorted(got), sorted(tc.want))) {
			t.Errorf("%s: Grep(%+v) =\n%s\n%v; want\n%s", tc.name, tc.req, got, err, tc.want)
		}
	}
}

// head_limit counts entries in the list modes too.
func TestGrepHeadLimitEntries(t *testing.T) {
	f := newFixture(t, modeTree, Options{})
	got, err := f.s.Grep(context.Background(), GrepRequest{Pattern: "m", HeadLimit: 2})
	ls := strings.Split(got, "\n")
	if err != nil || len(ls) != 3 || ls[2] != "(showing the first 2 files; head_limit cut the rest)" {
		t.Fatalf("Grep = %q, %v", got, err)
	}
}

func TestGrepMaxOutput(t *testing.T) {
	long := strings.Repeat("x", 100)
	f := newFixture(t, map[string]string{"l.txt": "line 1\nline 2\nline 3\n", "long.txt": long + "\n"}, Options{})
	p := f.abs("l.txt")[0]
	two := len(lines(p+":line 1", p+":line 2")) + 1
	f.s.maxOutput = two + 3
	got, err := f.s.Grep(context.Background(), GrepRequest{Pattern: "line", Path: "l.txt", OutputMode: "content"})
	want := lines(p+":line 1", p+":line 2", "(output cut at "+itoa(two+3)+" bytes; narrow the search or set head_limit)")
	if err != nil || got != want {
		t.Errorf("Grep =\n%s\n%v; want\n%s", got, err, want)
	}
	// A single line over the cap is cut within the line.
	f.s.maxOutput = 20
	got, err = f.s.Grep(context.Background(), GrepRequest{Pattern: "x", Path: "long.txt", OutputMode: "content"})
	want = (f.abs("long.txt")[0] + ":" + long)[:20] + "\n(output cut at 20 bytes; narrow the search or set head_limit)"
	if err != nil || got != want {
		t.Errorf("Grep =\n%s\n%v; want\n%s", got, err, want)
	}
}

func TestGrepErrors(t *testing.T) {
	f := newFixture(t, modeTree, Options{})
	for _, tc := range []struct {
		req  GrepRequest
		want string
	}{
		{GrepRequest{Pattern: "a("}, "unclosed group"},
		{GrepRequest{Pattern: "a", OutputMode: "lines"}, `invalid output_mode "lines": use "content", "files_with_matches" or "count"`},
		{GrepRequest{}, "empty pattern"},
		{GrepRequest{Pattern: "a", Context: -1}, "-C must not be negative"},
		{GrepRequest{Pattern: "a", HeadLimit: -1}, "head_limit must not be negative"},
		{GrepRequest{Pattern: "a", Type: "nosuchtype"}, "unrecognized file type: nosuchtype"},
		{GrepRequest{Pattern: "a", Glob: "a/{b"}, `invalid glob "a/{b"`},
		{GrepRequest{Pattern: "a", Glob: "!"}, `invalid glob "!"`},
		{GrepRequest{Pattern: "a", Glob: "//x"}, `invalid glob "//x"`},
		{GrepRequest{Pattern: "a\nb"}, "ripgrep: "},
	} {
		got, err := f.s.Grep(context.Background(), tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "grep: ") {
			t.Errorf("Grep(%+v) = %q, %v; want an error with %q", tc.req, got, err, tc.want)
		}
	}
}

// readRecord holds at most its limit of a record, however long the
// record: the rest is read and dropped, and the next record is intact.
func TestReadRecordBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	r := bufio.NewReaderSize(strings.NewReader("short\n"+huge+"\nafter\n"+huge[:999]+"\n"+huge), 4096)
	var long []byte
	for i, want := range []struct {
		rec string
		cut bool
		err error
	}{
		{"short", false, nil},
		{huge[:1000], true, nil},
		{"after", false, nil},
		{huge[:999], false, nil},
		{huge[:1000], true, io.EOF},
	} {
		rec, cut, err := readRecord(r, '\n', 1000, &long)
		if string(rec) != want.rec || cut != want.cut || err != want.err {
			t.Errorf("record %d: %d bytes, cut %v, %v; want %d bytes, cut %v, %v", i, len(rec), cut, err, len(want.rec), want.cut, want.err)
		}
	}
	if cap(long) > 4096 {
		t.Errorf("readRecord grew its buffer to %d bytes for a limit of 1000", cap(long))
	}
}

// A record of rg's output longer than maxRecord is shown cut and marked.
func TestCollectorCutsLongRecords(t *testing.T) {
	line := "/ws/f.txt:1:" + strings.Repeat("y", 3*maxRecord)
	c := collector{max: 1 << 20}
	c.read(bufio.NewReaderSize(strings.NewReader(line+"\n/ws/f.txt:2:ok\n"), 64<<10), grepPlan{mode: modeContent})
	want := line[:maxRecord] + omittedEnd + "\n/ws/f.txt:2:ok"
	if got := c.result(modeContent, ""); got != want {
		t.Errorf("result: %d bytes ending %q; want %d bytes ending %q", len(got), got[max(0, len(got)-60):], len(want), want[len(want)-60:])
	}
}
