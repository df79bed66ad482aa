package scrub

import (
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/scrubtest"
)

const excerptKey = "sk-proj-" + "T3stK3yT3stK3yT3stK3y" // an openai-api-key and a registered value

func TestExcerpt(t *testing.T) {
	s := New(map[string]string{"API_KEY": excerptKey, "SHORT": "abc"})
	const marker = "[REDACTED:secret:API_KEY]"
	for _, c := range []struct {
		name     string
		text     string
		n        int
		cutShort bool
		want     string
		wantCut  bool
	}{
		{"short text, scrubbed whole", "key=" + excerptKey + " short=abc", 100, false,
			"key=" + marker + " short=abc", false},
		{"cut after the secret", "key " + excerptKey + " and then more", 4 + len(marker) + 4, false,
			"key " + marker + " and", true},
		// The secret straddles byte 10 of the text: scrubbed first, it is
		// a marker, and a marker the cut would split is left out.
		{"secret across the cut", "0123456 " + excerptKey + " tail", 10, false,
			"0123456 ", true},
		{"cut inside the marker's name", "ab " + excerptKey, 3 + len(marker) - 1, false,
			"ab ", true},
		{"cut just after the marker", "ab " + excerptKey + "!", 3 + len(marker), false,
			"ab " + marker, true},
		{"cut at a rune boundary", "héllo", 2, false, "h", true},
		{"a format across the cut", "aws AKIAIOSFODNN7EXAMPLE end", 10, false, "aws ", true},
		{"formats redacted before the cut", "aws AKIAIOSFODNN7EXAMPLE end", 40, false,
			"aws [REDACTED:aws-access-key-id] end", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, cut := s.Excerpt(c.text, c.n, c.cutShort)
			if got != c.want || cut != c.wantCut {
				t.Fatalf("Excerpt(%q, %d, %v)\n got %q, %v\nwant %q, %v", c.text, c.n, c.cutShort, got, cut, c.want, c.wantCut)
			}
		})
	}
}

// TestExcerptNeverHalfShowsASecret cuts text holding a registered secret
// and a known format at every byte: no excerpt holds 4 bytes in a row of
// either, nor a piece of a marker.
func TestExcerptNeverHalfShowsASecret(t *testing.T) {
	aws := "AKIAIOSFODNN7EXAMPLE"
	s := New(map[string]string{"API_KEY": excerptKey})
	text := "first " + excerptKey + " middle " + aws + " last"
	for n := 0; n <= len(text)+10; n++ {
		got, _ := s.Excerpt(text, n, false)
		if len(got) > n {
			t.Fatalf("n=%d: excerpt %q is longer", n, got)
		}
		for _, secret := range []string{excerptKey, aws} {
			for i := 0; i+4 <= len(secret); i++ {
				if strings.Contains(got, secret[i:i+4]) {
					t.Fatalf("n=%d: excerpt %q holds %q of %q", n, got, secret[i:i+4], secret)
				}
			}
		}
		if strings.Count(got, "[") != strings.Count(got, "]") {
			t.Fatalf("n=%d: excerpt %q splits a marker", n, got)
		}
	}
}

// TestExcerptOfTextCutShort: the end of text that is only the start of
// longer output may be the start of a secret.
func TestExcerptOfTextCutShort(t *testing.T) {
	s := New(map[string]string{"API_KEY": excerptKey, "PIN": "8472-9135"})
	for _, c := range []struct{ text, want string }{
		// A registered value cut short, 4 bytes or more of it.
		{"pin: 8472-91", "pin: [REDACTED:secret:PIN]"},
		{"pin: 8472", "pin: [REDACTED:secret:PIN]"},
		// Under 4 bytes, as for whole values, it would redact ordinary
		// text (here "847" could be any number): shown.
		{"pin: 847", "pin: 847"},
		// A known format cut short, from its trigger to the end of the line.
		{"first line\nremote: ghp_a1B2", "first line\nremote: [REDACTED:github-token]"},
		{"DB_PASSWORD=hun", "DB_[REDACTED:secret-assignment]"},
		{"fetch https://user:pa", "fetch https[REDACTED:url-credentials]"},
		// Whichever could begin first wins.
		{"x sk-proj-T3stK3y", "x [REDACTED:secret:API_KEY]"},
		// Complete secrets are redacted as usual; their markers' words
		// ("secret", "token") are not triggers.
		{"GITHUB_TOKEN=abcd3fgh\nok " + excerptKey + " done", "GITHUB_TOKEN=[REDACTED:secret-assignment]\nok [REDACTED:secret:API_KEY] done"},
		// A PEM key cut short is redacted to the end by its own pattern.
		{"key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQ", "key:\n[REDACTED:pem-private-key]"},
	} {
		got, cut := s.Excerpt(c.text, 1000, true)
		if got != c.want || cut {
			t.Errorf("Excerpt(%q, cut short)\n got %q, %v\nwant %q, false", c.text, got, cut, c.want)
		}
		// The same text known to be whole keeps what only looks like the
		// start of a secret.
		if got, _ := s.Excerpt(c.text, 1000, false); got != s.String(c.text) {
			t.Errorf("Excerpt(%q, whole) = %q, want String's %q", c.text, got, s.String(c.text))
		}
	}
}

// TestExcerptOfLongText: only n+4 KiB are read; a secret longer than that
// margin which straddles the cut is cut short where reading stops, and is
// redacted from its start.
func TestExcerptOfLongText(t *testing.T) {
	long := strings.Repeat("Zq9-", 2*excerptMargin/4) // 8 KiB
	s := New(map[string]string{"BIG": long})
	text := "begin " + long + " end"
	got, cut := s.Excerpt(text, 40, false)
	if want := "begin [REDACTED:secret:BIG]"; got != want || !cut {
		t.Fatalf("got %q, %v; want %q, true", got, cut, want)
	}
	// Megabytes of lines full of triggers: the excerpt reads its start.
	text = strings.Repeat("the token is password=abc sk-x https://y\n", 1<<20/40)
	got, cut = s.Excerpt(text, 30, false)
	if want := "the token is password=abc sk-x"; got != want || !cut {
		t.Fatalf("got %q, %v; want %q, true", got, cut, want)
	}
}

func TestExcerptFormats(t *testing.T) {
	s := New(nil)
	for _, c := range scrubtest.Credentials {
		got, cut := s.Excerpt(c.Line(), 10000, false)
		if got != c.Redacted() || cut {
			t.Errorf("%s: got %q, %v, want %q", c.Kind, got, cut, c.Redacted())
		}
	}
}

func BenchmarkExcerptOfLongOutput(b *testing.B) {
	s := New(map[string]string{"X": "registered-value"})
	text := strings.Repeat("Traceback: the token is invalid, see https://example.com/x\n", 16<<20/60)
	for b.Loop() {
		s.Excerpt(text, 1024, true)
	}
}
