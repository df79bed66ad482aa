package dockertest

import (
	"errors"
	"flag"
	"strings"
	"testing"
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

func TestDecide(t *testing.T) {
	const problem = "no Docker engine answers (Cannot connect to the Docker daemon)"
	tests := []struct {
		name     string
		problem  string
		ci       bool
		want     verdict
		mentions []string
	}{
		{name: "nothing missing", want: proceed},
		{name: "nothing missing in CI", ci: true, want: proceed},
		{name: "missing", problem: problem, want: skip, mentions: []string{"skipping", problem, "scripts/ensure-docker.sh"}},
		{name: "missing in CI", problem: problem, ci: true, want: fail, mentions: []string{"CI is set", problem, "scripts/ensure-docker.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := decide(tt.problem, tt.ci)
			if got != tt.want {
				t.Errorf("verdict = %d, want %d (message %q)", got, tt.want, msg)
			}
			if tt.want == proceed && msg != "" {
				t.Errorf("message = %q, want none", msg)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not mention %q", msg, m)
				}
			}
		})
	}
}

func TestInCI(t *testing.T) {
	for _, tt := range []struct {
		value string
		set   bool
		want  bool
	}{
		{set: false, want: false},
		{value: "", set: true, want: false},
		{value: "false", set: true, want: false},
		{value: "0", set: true, want: false},
		{value: "true", set: true, want: true},
		{value: "1", set: true, want: true},
		{value: "yes", set: true, want: true},
	} {
		t.Setenv("CI", tt.value) // restores CI afterwards
		if !tt.set {
			unsetenv(t, "CI")
		}
		if got := inCI(); got != tt.want {
			t.Errorf("CI=%q (set %v): inCI() = %v, want %v", tt.value, tt.set, got, tt.want)
		}
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
	t.Setenv("CI", "true")
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
