package ci

import (
	"fmt"
	"os"
	"testing"
)

func TestRunning(t *testing.T) {
	for _, tt := range []struct {
		value string // "-": unset
		want  bool
	}{
		{"-", false},
		{"", false},
		{"0", false},
		{"false", false},
		{"False", false},
		{"FALSE", false},
		{"true", true},
		{"TRUE", true},
		{"1", true},
		{"yes", true},
		{" false", true}, // only the exact words say no
	} {
		t.Setenv(Var, tt.value) // restored when the test ends
		if tt.value == "-" {
			if err := os.Unsetenv(Var); err != nil {
				t.Fatal(err)
			}
		}
		if got := Running(); got != tt.want {
			t.Errorf("CI=%q: Running() = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// recorder keeps what a helper did to the test instead of doing it: its
// Fatal and Skip return, so a helper must not go on after them.
type recorder struct {
	testing.TB
	did string
}

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.did = "fatal: " + fmt.Sprint(args...) }
func (r *recorder) Skip(args ...any)  { r.did = "skip: " + fmt.Sprint(args...) }
func (r *recorder) Log(args ...any)   { r.did = "log: " + fmt.Sprint(args...) }

func TestHelpers(t *testing.T) {
	const why = "git is not installed (apt-get install git)"
	for _, tt := range []struct {
		ci   string
		call func(testing.TB)
		want string
	}{
		{"", func(t testing.TB) { Skip(t, why) }, "skip: skipping (CI is unset): " + why},
		{"true", func(t testing.TB) { Skip(t, why) }, "fatal: CI is set, so this test must run, but " + why},
		{"false", func(t testing.TB) { Skipf(t, "%s is not installed (%s)", "git", "apt-get install git") }, "skip: skipping (CI is unset): " + why},
		{"1", func(t testing.TB) { Skipf(t, "%s is not installed (%s)", "git", "apt-get install git") }, "fatal: CI is set, so this test must run, but " + why},
		{"0", func(t testing.TB) { DoWithout(t, why) }, "log: testing less (CI is unset): " + why},
		{"true", func(t testing.TB) { DoWithout(t, why) }, "fatal: CI is set, so this test must run in full, but " + why},
	} {
		t.Setenv(Var, tt.ci)
		r := &recorder{TB: t}
		tt.call(r)
		if r.did != tt.want {
			t.Errorf("CI=%q: did %q, want %q", tt.ci, r.did, tt.want)
		}
	}
}
