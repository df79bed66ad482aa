package plugin

import (
	"context"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// inFlight makes the call named id cancellable through Cancel until the
// returned func is called. A second call under an ID in flight (a host
// that reused one) is not cancellable by it: the first keeps the name.
func (s *server) inFlight(id string, cancel func()) (unregister func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.calls[id]; taken {
		return func() {}
	}
	s.calls[id] = cancel
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.calls, id)
	}
}

// Cancel ends a call in flight; its Spawn stream brings the result.
func (s *server) Cancel(_ context.Context, req *sandboxpb.CancelRequest) (*sandboxpb.CancelResponse, error) {
	s.mu.Lock()
	cancel, found := s.calls[req.GetCall()]
	s.mu.Unlock()
	if found {
		cancel()
	}
	return &sandboxpb.CancelResponse{Found: found}, nil
}
