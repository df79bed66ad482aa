package proctest

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// HaveRoot reports whether the test runs as root, which acting as
// another user (running its processes, owning its files) needs. Without root it fails the test in CI,
// which runs as root and must run such tests, and elsewhere logs that
// what needs root is skipped: the caller skips it (t.Skip, or a return).
func HaveRoot(t testing.TB, what string) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return true
	}
	ci.DoWithout(t, what+" needs root, to act as another user, so it is left out (CI runs as root)")
	return false
}

// RequireRoot skips the test unless it runs as root (see HaveRoot).
func RequireRoot(t testing.TB) {
	t.Helper()
	if !HaveRoot(t, "this test") {
		t.SkipNow()
	}
}

// OpenTempDir is a fresh directory, removed when the test ends, that
// every user may read and search (mode 0755): for a test whose processes
// run as another user. Not t.TempDir: its parent is the test user's
// alone (0700), so another user could not reach anything below it.
func OpenTempDir(t testing.TB, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // #nosec G302 -- the point of OpenTempDir: another user must read and search it (see above)
		t.Fatal(err)
	}
	return dir
}
