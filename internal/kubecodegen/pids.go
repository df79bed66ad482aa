package kubecodegen

import (
	"crypto/rand"
	"encoding/binary"
	"hash/fnv"
	"strconv"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// Kubernetes has no pids limit per Pod, only the kubelet's podPidsLimit,
// one for every Pod of the node; user namespaces, which would give each
// Pod its own count, need a runtime the test cluster's containerd is not.
// So with pids_limit the sandbox runs as a user of its own and sandboxd
// holds that user to the limit (--pids-limit: RLIMIT_NPROC, which the
// kernel checks against all of a user's tasks, node-wide): a fork bomb
// in one sandbox is held there, and every other Pod forks on.
//
// The user is random, for a workspace that goes with the Pod, or comes
// from the claim's name and namespace, for one that outlives it, so that
// the next sandbox on the claim is the owner of the files the last one
// wrote. The group stays the image's (fsGroup), so volumes are writable
// as before. No name goes with the user in the image's /etc/passwd
// (whoami says so); HOME is /tmp as for any sandbox.

// minPidsLimit is sandboxd's own floor (its threads count).
const minPidsLimit = 64

// Where a sandbox's own user is taken from: above the IDs distributions
// hand out and below 2^31, which runAsUser must be under.
const (
	sandboxUIDBase  = 1 << 20
	sandboxUIDRange = 1<<31 - 1 - sandboxUIDBase
)

// runAsUser is the UID the sandbox's Pod runs as: the image's, unless
// pids_limit gives it one of its own.
func (o objects) runAsUser() int64 {
	if o.set.pidsLimit == 0 {
		return codegenimage.UID
	}
	if claim := o.set.claimName(); claim != "" {
		h := fnv.New64a()
		_, _ = h.Write([]byte(o.ns + "/" + claim))
		return sandboxUIDBase + int64(h.Sum64()%sandboxUIDRange)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return sandboxUIDBase + int64(binary.BigEndian.Uint64(b[:])%sandboxUIDRange)
}

// pidsArgs are sandboxd's flags for the limit.
func (o objects) pidsArgs() []string {
	if o.set.pidsLimit == 0 {
		return nil
	}
	return []string{"--pids-limit", strconv.FormatInt(o.set.pidsLimit, 10)}
}
