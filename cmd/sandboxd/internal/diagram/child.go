package diagram

import (
	"errors"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// limitError is the LimitError for a child's limit, if it hit one.
func limitError(err error, lim Limits) error {
	switch {
	case errors.Is(err, child.ErrTimeout):
		return timedOut(lim)
	case errors.Is(err, child.ErrOutput):
		return &LimitError{What: "image", Limit: fmt.Sprintf("%d bytes", lim.Output)}
	case errors.Is(err, child.ErrMemory):
		return &LimitError{What: "memory", Limit: fmt.Sprintf("%d MiB", lim.Memory>>20)}
	}
	return err
}

// childLimits are the child's share of lim.
func childLimits(lim Limits) child.Limits {
	return child.Limits{Timeout: lim.Timeout, Memory: lim.Memory, Output: lim.Output, Credential: lim.Credential}
}
