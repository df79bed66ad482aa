package dockertest

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

func TestProbeProblem(t *testing.T) {
	for _, tt := range []struct {
		probe    probeResult
		mentions []string
	}{
		{probe: probeResult{}},
		{probe: probeResult{noCLI: errors.New(`exec: "docker": executable file not found in $PATH`)}, mentions: []string{"docker CLI is not installed", "executable file not found"}},
		{probe: probeResult{noEngine: errors.New("Cannot connect to the Docker daemon")}, mentions: []string{"no Docker engine answers", "Cannot connect"}},
	} {
		got := tt.probe.problem()
		if len(tt.mentions) == 0 && got != "" {
			t.Errorf("problem() of a usable engine = %q, want none", got)
		}
		for _, m := range tt.mentions {
			if !strings.Contains(got, m) {
				t.Errorf("problem() = %q, does not mention %q", got, m)
			}
		}
	}
}

// TestNeedSaysHowToFix: a missing engine fails a test under CI with a
// message that names the problem and the fix, and lets one through
// when nothing is missing.
func TestNeedSaysHowToFix(t *testing.T) {
	t.Setenv(ci.Var, "true")
	const problem = "no Docker engine answers (Cannot connect to the Docker daemon)"
	rec := &recorder{TB: t}
	need(rec, "")
	if len(rec.failed) != 0 {
		t.Errorf("need with nothing missing recorded %q", rec.failed)
	}
	need(rec, problem)
	if len(rec.failed) != 1 || !strings.Contains(rec.failed[0], problem) || !strings.Contains(rec.failed[0], "scripts/ensure-docker.sh") {
		t.Errorf("need under CI recorded %q, want one failure naming %q and scripts/ensure-docker.sh", rec.failed, problem)
	}
}

// TestRequireHere proves Require lets a test through on a machine with an
// engine; every Docker test below depends on it doing so.
func TestRequireHere(t *testing.T) {
	Require(t)
	if p := probe().problem(); p != "" {
		t.Fatalf("Require passed but the probe says %s", p)
	}
	if p := busyboxProblem(); p != "" {
		t.Errorf("busybox: %s", p)
	}
}

// TestRequireSkipsInShortMode: under -short, Require skips with a message
// saying why, even where an engine answers and even under CI.
func TestRequireSkipsInShortMode(t *testing.T) {
	t.Setenv(ci.Var, "true")
	short := flag.Lookup("test.short").Value
	was := short.String()
	if err := short.Set("true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = short.Set(was) })

	rec := &recorder{}
	var skipped bool
	t.Run("require", func(t *testing.T) {
		rec.TB = t
		defer func() { skipped = t.Skipped() }()
		Require(rec)
	})
	if !skipped || len(rec.failed) != 0 || !strings.Contains(rec.skipped, "-short") || !strings.Contains(rec.skipped, "Docker") {
		t.Errorf("Require under -short: skipped %v (%q), failures %q; want a skip that names -short and Docker", skipped, rec.skipped, rec.failed)
	}
}
