package watch

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func matches(p Page) []string {
	var out []string
	for _, e := range p.Events {
		if e.Kind == KindMatch {
			out = append(out, e.Stream+":"+e.Line)
		}
	}
	return out
}

func TestLinesAcrossPiecesAndCuts(t *testing.T) {
	w := New(Options{Patterns: []*regexp.Regexp{regexp.MustCompile(`ERROR`)}, MaxLine: 16})
	w.Output("stderr", "ok\nERR")
	w.Output("stderr", "OR one\r\nfine\n")
	w.Output("stdout", "ERROR "+strings.Repeat("x", 1<<20)) // cut at 16 bytes, no newline yet
	w.Output("stdout", strings.Repeat("ERROR", 100)+"\nERROR two\n")
	w.Output("stdout", "ERROR tail")
	w.Exit(1, "exited with code 1")
	p := w.Events(0)
	got := strings.Join(matches(p), "|")
	if want := "stderr:ERROR one|stdout:ERROR xxxxxxxxxx|stdout:ERROR two|stdout:ERROR tail"; got != want {
		t.Fatalf("matches %q, want %q", got, want)
	}
	if e := p.Events[1]; !e.Truncated || e.LineNumber != 1 {
		t.Errorf("cut line event %+v", e)
	}
	if e := p.Events[2]; e.LineNumber != 2 || e.Truncated {
		t.Errorf("line after the cut %+v", e)
	}
	last := p.Events[len(p.Events)-1]
	if last.Kind != KindExit || *last.ExitCode != 1 || !p.Exited || p.LastEventID != last.ID {
		t.Errorf("last event %+v, page %+v", last, p)
	}
}

func TestCutKeepsWholeRunes(t *testing.T) {
	w := New(Options{Patterns: []*regexp.Regexp{regexp.MustCompile(`^x`)}, MaxLine: 4})
	w.Output("stdout", "xxxé\n")
	if got := matches(w.Events(0)); len(got) != 1 || got[0] != "stdout:xxx" {
		t.Fatalf("got %q", got)
	}
}

func TestRingDropsOldestAndCounts(t *testing.T) {
	w := New(Options{Patterns: []*regexp.Regexp{regexp.MustCompile(`.`)}, MaxEvents: 4})
	for range 10 {
		w.Output("stdout", "e\n")
	}
	p := w.Events(0)
	if len(p.Events) != 4 || p.Events[0].ID != 7 || p.Dropped != 6 || p.LastEventID != 10 {
		t.Fatalf("page %+v", p)
	}
	if p := w.Events(8); len(p.Events) != 2 || p.Dropped != 0 || p.Events[0].ID != 9 {
		t.Fatalf("since 8: %+v", p)
	}
	if p := w.Events(10); len(p.Events) != 0 || p.Dropped != 0 {
		t.Fatalf("since 10: %+v", p)
	}
}

func TestPageIsBounded(t *testing.T) {
	w := New(Options{Patterns: []*regexp.Regexp{regexp.MustCompile(`.`)}, MaxEvents: 1000})
	for range 200 {
		w.Output("stdout", "e\n")
	}
	p := w.Events(0)
	if len(p.Events) != pageEvents || !p.More {
		t.Fatalf("%d events, more %v", len(p.Events), p.More)
	}
}

func kinds(p Page) string {
	var b strings.Builder
	for _, e := range p.Events {
		b.WriteString(string(e.Kind) + " ")
	}
	return strings.TrimSpace(b.String())
}

// TestIdleOncePerSilence: a silent process gets one idle event, not one
// per period; output re-arms it.
func TestIdleOncePerSilence(t *testing.T) {
	w := New(Options{Idle: 50 * time.Millisecond})
	time.Sleep(200 * time.Millisecond)
	if got := kinds(w.Events(0)); got != "idle" {
		t.Fatalf("after a silence: %q", got)
	}
	w.Activity()
	w.Output("stdout", "hello\n")
	time.Sleep(200 * time.Millisecond)
	if got := kinds(w.Events(0)); got != "idle idle" {
		t.Fatalf("after output and another silence: %q", got)
	}
	w.Exit(0, "exited with code 0")
	w.Activity()
	time.Sleep(100 * time.Millisecond)
	if got := kinds(w.Events(0)); got != "idle idle exit" {
		t.Fatalf("after exit: %q", got)
	}
}

// TestActivityPostponesIdle: output more often than Idle never idles.
func TestActivityPostponesIdle(t *testing.T) {
	w := New(Options{Idle: 150 * time.Millisecond})
	for range 10 {
		time.Sleep(30 * time.Millisecond)
		w.Activity()
	}
	if got := kinds(w.Events(0)); got != "" {
		t.Fatalf("busy process idled: %q", got)
	}
	w.Exit(0, "")
}

func TestCompileBounds(t *testing.T) {
	for _, bad := range [][]string{{""}, {"("}, {strings.Repeat("a", MaxPatternLen+1)}, make([]string, MaxPatterns+1)} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("Compile(%.40q) accepted", bad)
		}
	}
	if res, err := Compile([]string{"panic:", `(?i)error`}); err != nil || len(res) != 2 {
		t.Fatalf("Compile: %v", err)
	}
}
