package dockerbox

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
)

// A workspace of bounded size (workspace_tmpfs) is a tmpfs the engine
// mounts at the workspace instead of a host directory: the one limit on
// a sandbox's files the kernel enforces on any host, where a bind-mounted
// directory or a Docker volume can be bounded only on file systems with
// project quotas. A write past it fails with ENOSPC ("No space left on
// device"), which the agent reads as such. Its pages are memory, charged
// to the container (so counted in `memory`), and it goes with the
// sandbox, as a workspace the provider makes does. A host directory or a
// workspace volume cannot be one, and a sandbox on one cannot be forked:
// the engine copies nothing out of a tmpfs, least of all a frozen one's.

// minWorkspaceTmpfs is the least a workspace tmpfs may hold.
const minWorkspaceTmpfs = 1 << 20

// errTmpfsFork is the refusal of a fork of a sandbox on a tmpfs.
var errTmpfsFork = errors.New("its workspace is a tmpfs (workspace_tmpfs), which the engine cannot copy")

// parseWorkspaceTmpfs reads the key's size against the entry's own
// workspace and memory limit (0: none).
func parseWorkspaceTmpfs(v, workspace string, memory int64) (int64, error) {
	n, err := bounded.ParseSize(v)
	if err != nil {
		return 0, err
	}
	switch {
	case n < minWorkspaceTmpfs:
		return 0, fmt.Errorf("size %q out of range (at least 1m)", v)
	case workspace != "":
		return 0, errors.New(`excludes the key "workspace" (a host directory cannot be bounded; the tmpfs is the workspace)`)
	case memory > 0 && n >= memory:
		return 0, fmt.Errorf("%s is no less than memory (%s), which the tmpfs's pages count against", v, strconv.FormatInt(memory, 10)+" bytes")
	}
	return n, nil
}

// tmpfsOptions are the workspace tmpfs's mount options: owned by the
// sandbox's user, as a workspace the provider makes is, and exec, as a
// workspace must be for the builds and tests run in it.
func tmpfsOptions(size int64, uid, gid int) string {
	return "rw,exec,nosuid,nodev,size=" + strconv.FormatInt(size, 10) +
		",uid=" + strconv.Itoa(uid) + ",gid=" + strconv.Itoa(gid) + ",mode=0755"
}
