package provision

import (
	"fmt"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// DefaultIdleTimeout releases a provisioned sandbox nothing has been
// connected to for this long.
const DefaultIdleTimeout = 30 * time.Minute

// IdleTimeout is the value of a provider mode's idle_timeout key:
// DefaultIdleTimeout when it is not set. The error, for a value that is
// not positive, is for the caller to name the key in.
func IdleTimeout(v *sandbox.Duration) (time.Duration, error) {
	if v == nil {
		return DefaultIdleTimeout, nil
	}
	if d := time.Duration(*v); d > 0 {
		return d, nil
	}
	return DefaultIdleTimeout, fmt.Errorf("must be a positive duration such as \"30m\", got %v", time.Duration(*v))
}

// The values of a provider mode's on_idle key: what idle_timeout does to
// a sandbox nothing has been connected to for that long.
const (
	OnIdleRelease = "release"
	OnIdlePause   = "pause"
)

// OnIdle is the value of a provider mode's on_idle key: whether an idle
// sandbox is paused until its next call (a Sleeper's Sleep) rather than
// released. The error, for a value that is neither, is for the caller to
// name the key in.
func OnIdle(v string) (pause bool, err error) {
	switch v {
	case "", OnIdleRelease:
		return false, nil
	case OnIdlePause:
		return true, nil
	}
	return false, fmt.Errorf("want %s (the default) or %s, got %q", OnIdleRelease, OnIdlePause, v)
}
