package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

const vetToken = "ghp_Xq7vR2mK9pL4sT8wY1zB6nC3dF5gH0jAaEeI"

// The lines the vetter marks are exactly those holding a secret, also
// where a secret straddles a window's cut, sits in a line longer than a
// window, or is a key block over several lines; a quoted marker is none.
func TestLineVetterMarksSecretLines(t *testing.T) {
	filler := strings.Repeat("abcdefghij ", 10) // 110 bytes
	var lines []string
	secret := map[int]bool{}
	add := func(s string, isSecret bool) {
		lines = append(lines, s)
		if isSecret {
			secret[len(lines)] = true
		}
	}
	add("GITHUB_TOKEN="+vetToken, true)
	add("quoted [REDACTED:github-token] here", false)
	// Fill to just before the first cut, so the next secret straddles it.
	for n := 2*len(filler) + 100; n < vetWindow-len(filler); n += len(filler) + 1 {
		add(filler, false)
	}
	add(strings.Repeat("y", 60)+" token "+vetToken, true)
	add("-----BEGIN PRIVATE KEY-----", true)
	add("MIIEvQIBADANBgkqhkiG9w0B", true)
	add("-----END PRIVATE KEY-----", true)
	add("after the key", false)
	add(strings.Repeat("z", 3*vetWindow)+vetToken+strings.Repeat("z", 10), true) // one line over three windows
	add("last", false)
	text := strings.Join(lines, "\n") + "\n"

	v := newLineVetter(scrub.New(nil), strings.NewReader(text), 0)
	for n := 1; n <= len(lines); n++ {
		if got := v.secret(n); got != secret[n] {
			t.Errorf("line %d (%.40q...): secret %v, want %v", n, lines[n-1], got, secret[n])
		}
	}
	if !newLineVetter(scrub.New(nil), strings.NewReader(text), 0).any() {
		t.Error("any() = false")
	}
	if newLineVetter(scrub.New(nil), strings.NewReader("nothing\nhere\n"), 0).any() {
		t.Error("any() = true on clean text")
	}
}

// redactedSpans bounds each range the scrubber replaced, however the
// text around it repeats, and takes a quoted marker for none.
func TestRedactedSpans(t *testing.T) {
	sc := scrub.New(map[string]string{"V": "abcd"})
	tok := "GITHUB_TOKEN=" + vetToken + "\n"
	for _, tc := range []struct {
		text  string
		truth [][2]int // what was replaced
		exact bool     // the spans must be exactly these
	}{
		{"x abcd y", [][2]int{{2, 6}}, true},
		{"abcd", [][2]int{{0, 4}}, true},
		{"abcdabcd abcd", [][2]int{{0, 4}, {4, 8}, {9, 13}}, false},
		{tok + tok, [][2]int{{13, 53}, {67, 107}}, true},
		{"[REDACTED:x] abcd [REDACTED:y]", [][2]int{{13, 17}}, true},
		{"-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\nabcd", [][2]int{{0, 57}, {58, 62}}, false}, // the "\n" between could be any of three,
	} {
		out := sc.String(tc.text)
		spans := redactedSpans(tc.text, out)
		if tc.exact && fmt.Sprint(spans) != fmt.Sprint(tc.truth) {
			t.Errorf("%q: spans %v, want %v (scrubbed: %q)", tc.text, spans, tc.truth, out)
		}
		for _, r := range tc.truth {
			in := false
			for _, sp := range spans {
				in = in || sp[0] <= r[0] && r[1] <= sp[1]
			}
			if !in {
				t.Errorf("%q: %v is in no span of %v", tc.text, r, spans)
			}
		}
	}
}
