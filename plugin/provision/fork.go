package provision

import (
	"context"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/plugin"
)

// MaxForks bounds one Fork's count.
const MaxForks = 16

// ForkSource is the box id, held as a B, that a Fork of count copies
// from: plugin.ErrNotProvisioned when none is held, an error when count
// is out of 1..MaxForks or the box is another provider's kind.
func ForkSource[B Box](h *Holder, id string, count int, mode string) (B, error) {
	var src B
	if count < 1 || count > MaxForks {
		return src, fmt.Errorf("fork %s: count must be between 1 and %d, got %d", id, MaxForks, count)
	}
	got, ok := h.Get(id)
	if !ok {
		return src, plugin.ErrNotProvisioned
	}
	if src, ok = got.(B); !ok {
		return src, fmt.Errorf("fork %s: not a %s sandbox", id, mode)
	}
	return src, nil
}

// AddForks makes count forks of the sandbox id with start, marks each
// as one (details start=fork, forked_from=id) and holds it: all or
// none. When one cannot be made or held, discard tears it down (start
// leaves nothing of one that fails), the forks held so far are
// released, and the error is returned.
func (h *Holder) AddForks(ctx context.Context, id string, count int, start func() (Box, error), discard func(Box)) ([]plugin.Provisioned, error) {
	var out []plugin.Provisioned
	for range count {
		b, err := start()
		if err == nil {
			// Details is the box's own map: Info's copy shares it.
			if details := b.Info().Details; details == nil {
				err = fmt.Errorf("sandbox %s has no details to mark it a fork", b.Info().ID)
			} else {
				details["start"], details["forked_from"] = "fork", id
				err = h.Add(b)
			}
			if err != nil {
				discard(b)
			}
		}
		if err != nil {
			for _, made := range out {
				_ = h.Release(context.WithoutCancel(ctx), made.ID, plugin.ReleaseOptions{})
			}
			return nil, fmt.Errorf("fork %s: %w", id, err)
		}
		out = append(out, b.Info())
	}
	return out, nil
}
