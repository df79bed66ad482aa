package scrub

import (
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/scrubtest"
)

// TestRedTeamFalsePositives holds the ordinary lines issue 16 found
// mangled: a name that says secret followed by an expression, prose, or
// a CSS class that begins like a key.
func TestRedTeamFalsePositives(t *testing.T) {
	s := New(nil)
	for _, line := range []string{
		"token = strings.TrimSpace(token)",
		"self.password = password",
		`api_key = config["api_key"]`,
		"# Password: must be at least 12 characters",
		"// Secret: rotate the signing key every 90 days",
		".sk-fading-circle-animation-wrapper { width: 40px; }",
	} {
		if got := s.String(line); got != line {
			t.Errorf("ordinary line changed:\n in  %q\n got %q", line, got)
		}
	}
}

// TestCorpora measures the default patterns on the corpora of
// internal/scrubtest: every credential must be caught (recall), and no
// line of ordinary code or prose changed (false positives).
func TestCorpora(t *testing.T) {
	s := New(nil)
	lines := scrubtest.OrdinaryLines()
	if len(lines) < 200 {
		t.Fatalf("the ordinary corpus has %d lines; it should have 200 or more", len(lines))
	}
	changed := 0
	for _, line := range lines {
		if got := s.String(line); got != line {
			changed++
			t.Errorf("ordinary line changed:\n in  %q\n got %q", line, got)
		}
	}
	for name, text := range scrubtest.Ordinary() {
		if got := s.String(text); got != text {
			t.Errorf("%s changed when scrubbed whole", name)
		}
	}

	kinds := map[string]bool{}
	caught := 0
	for _, c := range scrubtest.Credentials {
		kinds[c.Kind] = true
		got := s.String(c.Line())
		if !strings.Contains(got, c.Secret) && strings.Contains(got, "[REDACTED:"+c.Kind+"]") {
			caught++
		} else {
			t.Errorf("%s not caught: %q -> %q", c.Kind, c.Line(), got)
		}
	}
	if len(scrubtest.Credentials) < 30 {
		t.Errorf("the credential corpus has %d secrets; it should have 30 or more", len(scrubtest.Credentials))
	}
	t.Logf("recall: %d of %d credentials caught (%.1f%%), %d kinds",
		caught, len(scrubtest.Credentials), 100*float64(caught)/float64(len(scrubtest.Credentials)), len(kinds))
	t.Logf("false positives: %d of %d ordinary lines changed (%.1f%%)",
		changed, len(lines), 100*float64(changed)/float64(len(lines)))
}
