package codegenimage

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParseWorkspaceUsage(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want uint64
		ok   bool
	}{
		{"1234\t/workspace\n", 1234 << 10, true},
		{"du: cannot read directory '/workspace/locked': Permission denied\n8\t/workspace\n", 8 << 10, true},
		{"", 0, false},
		{"12\t/elsewhere\n", 0, false},
		{"lots\t/workspace\n", 0, false},
		{"-1\t/workspace\n", 0, false},
		{"99999999999999999999999\t/workspace\n", 0, false},
	} {
		got, ok := ParseWorkspaceUsage(tc.out)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.out, got, ok, tc.want, tc.ok)
		}
	}
}

// TestWorkspaceUsageCommand: the command is what this machine's
// coreutils run (the image's are Debian's too), bar the directory.
func TestWorkspaceUsageCommand(t *testing.T) {
	if WorkspaceUsage[len(WorkspaceUsage)-1] != WorkspaceDir {
		t.Fatalf("the command does not end with the workspace: %v", WorkspaceUsage)
	}
	dir := t.TempDir()
	args := append(append([]string(nil), WorkspaceUsage[1:len(WorkspaceUsage)-1]...), dir)
	out, err := exec.Command(WorkspaceUsage[0], args...).Output()
	if err != nil {
		t.Fatalf("%v: %v", WorkspaceUsage, err)
	}
	if _, ok := ParseWorkspaceUsage(strings.Replace(string(out), dir, WorkspaceDir, 1)); !ok {
		t.Errorf("du's output %q does not parse", out)
	}
}
