package arena

import (
	"context"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// NewWithProvision is New with provision standing in for the adapter,
// for tests of what the source does around it.
func NewWithProvision(provision func(ctx context.Context, a Args) (mcpsource.MCPConn, func() error, error)) *Source {
	s := New(promptkit.Options{})
	s.provision = provision
	return s
}
