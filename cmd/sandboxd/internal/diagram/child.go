package diagram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// childD2 names the D2 renderer among the functions a child of
// sandboxd's executable runs (see child.Serve).
const childD2 = "d2"

func init() { child.Register(childD2, serveD2) }

// d2Job is what the D2 child is given.
type d2Job struct {
	Source string
	Shapes int // the shapes limit
}

// serveD2 compiles, checks and renders a d2Job's source, all of it in
// the child: D2's compiler takes time cubic in the source's nesting,
// and its layout runs in an interpreter no context reaches.
func serveD2(input []byte) ([]byte, error) {
	var job d2Job
	if err := json.Unmarshal(input, &job); err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	return d2SVG(context.Background(), job.Source, job.Shapes)
}

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
