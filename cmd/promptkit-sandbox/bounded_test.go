package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInputsAreBounded: no command reads an endless input to its end:
// each stops past its limit with an error that names the limit.
func TestInputsAreBounded(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "runtime.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"hook input file", []string{"hook", "run", "--config", cfg, "--hook", "pii_filter", "--phase", "before_call", "--input", "/dev/zero"},
			"hook run: read input: input file /dev/zero is larger than 64 MiB (raise the limit with --max-input)"},
		{"hook input, a lower limit", []string{"hook", "run", "--config", cfg, "--hook", "pii_filter", "--phase", "before_call", "--input", "/dev/zero", "--max-input", "1m"},
			"hook run: read input: input file /dev/zero is larger than 1 MiB (raise the limit with --max-input)"},
		{"config", []string{"validate", "--config", "/dev/zero"}, "RuntimeConfig /dev/zero is larger than 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, "", tc.args...)
			if code != exitUsage || out != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d out %q stderr %q, want exit 2 saying %q", code, out, stderr, tc.want)
			}
		})
	}
	// stdin past the limit.
	code, _, stderr := cli(t, strings.Repeat("x", 2<<20), "spawn", "--max-input", "1m", "--", "true")
	if want := "spawn: read stdin: stdin is larger than 1 MiB (raise the limit with --max-input)"; code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("spawn: exit %d stderr %q, want %q", code, stderr, want)
	}
	code, _, stderr = cli(t, "", "spawn", "--max-input", "lots", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, `invalid size "lots"`) {
		t.Fatalf("bad --max-input: exit %d stderr %q", code, stderr)
	}
}
