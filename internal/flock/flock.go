// Package flock takes an exclusive lock on a file across processes: the
// Kubernetes harness's cluster and build cache, and the sandboxd image's
// build, are each one per machine while several test binaries run.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock on path, waiting while another process
// (or another caller in this one: each call opens its own descriptor)
// holds it, until ctx ends. The kernel drops the lock when its holder
// dies, so a crashed test binary never leaves it held.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644) // #nosec G302 G304 -- an empty lock file beside the cache its caller names; nothing is written to it
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
