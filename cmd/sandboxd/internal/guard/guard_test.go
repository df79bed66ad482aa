package guard

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
)

// corpus reads a testdata file: one entry a line, # comments and blank
// lines skipped, \n written for a newline within a command.
func corpus(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, strings.ReplaceAll(line, `\n`, "\n"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestRefused: every footgun of the corpus is refused, as the entry it
// matches, with a message that says why and that this is no boundary.
func TestRefused(t *testing.T) {
	entries := corpus(t, "refused.txt")
	caught := 0
	for _, e := range entries {
		cmd, name, ok := strings.Cut(e, "\t")
		if !ok {
			t.Fatalf("refused.txt: %q has no tab before the expected name", e)
		}
		err := Check(cmd)
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%q: not refused (%v)", cmd, err)
			continue
		}
		caught++
		if r.Name != name {
			t.Errorf("%q: refused as %q, want %q", cmd, r.Name, name)
		}
		if !strings.Contains(err.Error(), "not the security boundary") || !strings.Contains(err.Error(), r.Reason) {
			t.Errorf("%q: message %q does not say why", cmd, err)
		}
	}
	t.Logf("recall: %d of %d footguns refused", caught, len(entries))
}

// TestAllowed: no ordinary developer command of the corpus is refused.
func TestAllowed(t *testing.T) {
	entries := corpus(t, "allowed.txt")
	if len(entries) < 50 {
		t.Fatalf("allowed.txt has %d commands, want at least 50", len(entries))
	}
	refused := 0
	for _, cmd := range entries {
		if err := Check(cmd); err != nil {
			refused++
			t.Errorf("%q: %v", cmd, err)
		}
	}
	t.Logf("false positives: %d of %d ordinary commands", refused, len(entries))
}

func TestUnparsable(t *testing.T) {
	err := Check("echo 'unterminated")
	var r *Refusal
	if err == nil || errors.As(err, &r) || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("err = %v", err)
	}
}

// TestNesting: shells within shells are followed maxDepth deep; a
// deeper one passes (the guard is no boundary) without error.
func TestNesting(t *testing.T) {
	cmd := "reboot"
	for depth := 1; depth <= maxDepth+2; depth++ {
		cmd = "bash -c " + shellQuote(cmd)
		err := Check(cmd)
		var r *Refusal
		switch {
		case depth <= maxDepth && !errors.As(err, &r):
			t.Errorf("depth %d: not refused (%v)", depth, err)
		case depth > maxDepth && err != nil:
			t.Errorf("depth %d: %v, want it let through", depth, err)
		}
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
