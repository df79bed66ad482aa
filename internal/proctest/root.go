package proctest

import (
	"os"
	"testing"
)

// HaveRoot reports whether the test runs as root, which starting a
// process as another user needs. Without root it fails the test in CI,
// which runs as root and must run such tests, and elsewhere logs that
// what needs root is skipped: the caller skips it (t.Skip, or a return).
func HaveRoot(t testing.TB, what string) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return true
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI runs as root, and %s needs it", what)
	}
	t.Logf("skipping %s: it needs root (to run processes as another user)", what)
	return false
}

// RequireRoot skips the test unless it runs as root (see HaveRoot).
func RequireRoot(t testing.TB) {
	t.Helper()
	if !HaveRoot(t, "this test") {
		t.SkipNow()
	}
}
