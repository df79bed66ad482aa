package dockerbox

import (
	"strings"
	"testing"
)

func TestInitFilter(t *testing.T) {
	const failure = "[FATAL tini (7)] exec nosuch failed: No such file or directory\n"
	for _, tc := range []struct {
		name   string
		chunks []string
		code   int
		want   string // what passes through
		failed string // the init's reason, when the command never ran
	}{
		{"exec failure", []string{failure}, 127, "", "exec nosuch failed: No such file or directory"},
		{"exec failure in pieces", []string{"[FATAL", " tini (7)] exec nosuch", " failed: No such file or directory\n"}, 127, "", "exec nosuch failed: No such file or directory"},
		{"not executable", []string{"[FATAL tini (7)] exec /etc/passwd failed: Permission denied\n"}, 126, "", "exec /etc/passwd failed: Permission denied"},
		{"the line, but another status", []string{failure}, 1, failure, ""},
		{"the line, then more", []string{failure, "more"}, 127, failure + "more", ""},
		{"the hook's own stderr", []string{"warning: x\n", "[FATAL tini (7)] exec a failed: b\n"}, 127, "warning: x\n[FATAL tini (7)] exec a failed: b\n", ""},
		{"a prefix, then the call ended", []string{"[FATAL tini"}, 127, "[FATAL tini", ""},
		{"nothing", nil, 127, "", ""},
		{"the tether's exec failure", []string{"[FATAL promptkit-sandbox", " tether] exec nosuch failed: executable file not found in $PATH\n"}, 127, "", "exec nosuch failed: executable file not found in $PATH"},
		{"the tether's line, but another status", []string{"[FATAL promptkit-sandbox tether] exec a failed: b\n"}, 3, "[FATAL promptkit-sandbox tether] exec a failed: b\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			f := newInitFilter(&out)
			for _, c := range tc.chunks {
				if n, err := f.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", c, n, err)
				}
			}
			msg, failed := f.Failure(tc.code)
			f.Flush()
			if msg != tc.failed || failed != (tc.failed != "") {
				t.Errorf("Failure = %q, %v; want %q", msg, failed, tc.failed)
			}
			if out.String() != tc.want {
				t.Errorf("passed %q, want %q", out.String(), tc.want)
			}
		})
	}
}

// A prefix that is not the init's passes at once: a hook's stderr is not
// held back.
func TestInitFilterPassesTheHooksStderrAtOnce(t *testing.T) {
	var out strings.Builder
	f := newInitFilter(&out)
	_, _ = f.Write([]byte("[FATAL"))
	if out.Len() != 0 {
		t.Fatalf("passed %q of a possible init failure", out.String())
	}
	_, _ = f.Write([]byte(" other"))
	if out.String() != "[FATAL other" {
		t.Fatalf("passed %q, want it all once it cannot be the init's", out.String())
	}
}
