package metrics

import (
	"errors"

	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// OutcomeOf classifies a hook call from its sandbox's answer alone, for a
// caller that runs hook commands without knowing the hook: serve's exec
// calls, PromptKit's calls through the adapter. A timeout is TimedOut,
// any other error (a non-zero exit included) Failed, a clean exit whose
// stdout is a verdict denying Denied, and any other clean exit Allowed —
// a filter's unreadable verdict too, since an observe hook's stdout need
// not be a verdict and the caller cannot tell them apart. (The runtime,
// which knows its hooks, counts an unreadable verdict as Failed.)
func OutcomeOf(resp sandbox.Response, err error) Outcome {
	switch {
	case errors.Is(err, sandbox.ErrTimeout):
		return TimedOut
	case err != nil:
		return Failed
	}
	if v, perr := wire.ParseVerdict(resp.Stdout); perr == nil && !v.Allow {
		return Denied
	}
	return Allowed
}
