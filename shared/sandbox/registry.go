package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ErrDuplicateMode is returned by Register for a mode that already has a
// factory.
var ErrDuplicateMode = errors.New("sandbox: mode already registered")

// UnknownModeError is returned when no factory serves a mode. Known lists
// the modes that are registered, sorted, so the message can say what would
// have worked.
type UnknownModeError struct {
	Mode  string
	Known []string
}

func (e *UnknownModeError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("unknown sandbox mode %q (known modes: %s)", e.Mode, known)
}

// Registry maps mode names to factories. It is a plain value: make as many
// as you need (one per RuntimeConfig, one per test); nothing global is
// required. The zero value is ready to use and safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds a factory for mode. Registering a mode twice is an error
// wrapping ErrDuplicateMode; an empty mode or nil factory is an error too.
func (r *Registry) Register(mode string, f Factory) error {
	if mode == "" {
		return errors.New("sandbox: register: empty mode name")
	}
	if f == nil {
		return fmt.Errorf("sandbox: register mode %q: nil factory", mode)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.factories[mode]; ok {
		return fmt.Errorf("register mode %q: %w", mode, ErrDuplicateMode)
	}
	if r.factories == nil {
		r.factories = make(map[string]Factory)
	}
	r.factories[mode] = f
	return nil
}

// Lookup returns the factory for mode, if any.
func (r *Registry) Lookup(mode string) (Factory, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.factories[mode]
	return f, ok
}

// Serves reports whether a factory is registered for mode.
func (r *Registry) Serves(mode string) bool {
	_, ok := r.Lookup(mode)
	return ok
}

// Modes returns the registered mode names, sorted.
func (r *Registry) Modes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	modes := make([]string, 0, len(r.factories))
	for m := range r.factories {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	return modes
}

// Open builds the sandbox name with the factory registered for mode. An
// unregistered mode yields an *UnknownModeError listing the known modes; a
// factory's own error is returned wrapped with the sandbox and mode names.
// ctx bounds the opening (see Factory).
func (r *Registry) Open(ctx context.Context, name, mode string, cfg map[string]any) (Sandbox, error) {
	f, ok := r.Lookup(mode)
	if !ok {
		return nil, &UnknownModeError{Mode: mode, Known: r.Modes()}
	}
	sb, err := f(ctx, name, cfg)
	if err != nil {
		return nil, fmt.Errorf("open sandbox %q (mode %s): %w", name, mode, err)
	}
	if sb == nil {
		return nil, fmt.Errorf("open sandbox %q (mode %s): factory returned no sandbox", name, mode)
	}
	return sb, nil
}
