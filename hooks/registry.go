package hooks

import (
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// NewRegistry returns a registry that already serves the built-in direct
// mode; register plugin modes on it as needed.
func NewRegistry() *sandbox.Registry {
	r := sandbox.NewRegistry()
	// A fresh registry cannot already hold "direct".
	_ = direct.Register(r)
	return r
}

// withDirect returns r if it serves direct, else a copy of r that does, so
// "direct" resolves with no opt-in while the caller's registry is left as
// it was given.
func withDirect(r *sandbox.Registry) *sandbox.Registry {
	if r == nil {
		return NewRegistry()
	}
	if _, ok := r.Lookup(direct.ModeName); ok {
		return r
	}
	c := NewRegistry()
	for _, mode := range r.Modes() {
		if f, ok := r.Lookup(mode); ok {
			_ = c.Register(mode, f)
		}
	}
	return c
}
