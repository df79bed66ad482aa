// Package ci is the one place a test asks whether it runs in continuous
// integration, and the one rule that follows: a test that needs what the
// machine lacks (Docker, kubectl, a tool, root, Landlock) skips, saying
// what is missing and how to get it, except in CI, where it fails. CI
// runs make test, which installs everything the tests need, so a piece
// missing there is a broken CI, never a test to leave out quietly.
package ci

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Var is the environment variable that says CI, as every CI system we
// know of sets it.
const Var = "CI"

// Running reports whether the tests run in CI: Var is set to anything
// but "", "0" or "false", in any case. CI systems set CI=true (or 1); a
// developer who has CI set in a shell says CI=false, or CI=0, for not.
func Running() bool {
	switch strings.ToLower(os.Getenv(Var)) {
	case "", "0", "false":
		return false
	}
	return true
}

// Skip skips the test for want of something, as why says (what is
// missing, and how to get it); in CI it fails the test instead.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Running() {
		t.Fatal("CI is set, so this test must run, but " + why)
		return
	}
	t.Skip("skipping (CI is unset): " + why)
}

// Skipf is Skip with why formatted as fmt.Sprintf does.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}

// DoWithout lets a test that can go on without something go on,
// testing less, and logs why; in CI it fails the test instead.
func DoWithout(t testing.TB, why string) {
	t.Helper()
	if Running() {
		t.Fatal("CI is set, so this test must run in full, but " + why)
		return
	}
	t.Log("testing less (CI is unset): " + why)
}
