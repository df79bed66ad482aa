package codegenimage

import (
	"strconv"
	"strings"
)

// WorkspaceUsage is what a provider runs in a sandbox for the disk its
// workspace's files take, as the agent's commands see them: du's total
// in KiB, given a second, so that a huge tree costs a listing its
// figure, never its time.
var WorkspaceUsage = []string{"timeout", "1", "du", "-sk", WorkspaceDir}

// ParseWorkspaceUsage reads WorkspaceUsage's output: the bytes it
// counted, and false when du did not finish. du counts what it could
// read (it says so of the rest on stderr, and exits 1): a directory the
// agent locked itself out of is left out.
func ParseWorkspaceUsage(out string) (uint64, bool) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != 2 || fields[1] != WorkspaceDir {
		return 0, false
	}
	kib, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil || kib > 1<<53 {
		return 0, false
	}
	return kib << 10, true
}
