package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// server is a plugin that serves a mode, as found by resolve.
type server struct {
	inst    *instance
	version string
}

// resolve finds the plugin that serves mode: among the plugins named pin
// (any plugin when pin is empty), the newest version satisfying constraint
// whose own Describe lists the mode. Two different plugins serving the
// same mode without a pin is an error: which one runs must not depend on
// what happens to be installed.
func (h *Host) resolve(ctx context.Context, mode, pin, constraint string) (server, error) {
	var cons version.Constraints
	if constraint != "" {
		c, err := discovery.ParseConstraint(constraint)
		if err != nil {
			return server{}, err
		}
		cons = c
	}
	names := h.names()
	if pin != "" {
		names = []string{pin}
	}
	found, refused, err := h.resolveAll(ctx, names, mode, cons, true)
	if err != nil {
		return server{}, err
	}
	if len(found) == 0 && slices.ContainsFunc(refused, isRememberedFailure) {
		// Nothing else serves the mode: what failed before is tried again.
		if found, refused, err = h.resolveAll(ctx, names, mode, cons, false); err != nil {
			return server{}, err
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var which []string
		for _, s := range found {
			which = append(which, s.inst.cand.Name+" "+s.version)
		}
		return server{}, sandbox.Errorf(sandbox.KindStart,
			"mode %q is served by more than one plugin (%s); choose one with plugin: NAME", mode, strings.Join(which, ", "))
	}
	return server{}, h.notServed(mode, pin, constraint, refused)
}

// resolveAll resolves mode in each named plugin. With failures, plugins
// the cache remembers failing to start are passed over untried.
func (h *Host) resolveAll(ctx context.Context, names []string, mode string, cons version.Constraints, failures bool) ([]server, []error, error) {
	var found []server
	var refused []error
	for _, name := range names {
		s, why, err := h.resolveIn(ctx, name, mode, cons, failures)
		if err != nil {
			return nil, nil, err
		}
		refused = append(refused, why...)
		if s.inst != nil {
			found = append(found, s)
		}
	}
	return found, refused, nil
}

func isRememberedFailure(err error) bool {
	var rf *rememberedFailure
	return errors.As(err, &rf)
}

// resolveIn tries the versions of one plugin, newest first. It returns the
// first that serves mode, and why versions were passed over.
func (h *Host) resolveIn(ctx context.Context, name, mode string, cons version.Constraints, failures bool) (server, []error, error) {
	var refused []error
	if inst, ok, err := h.reattached(name); err != nil {
		return server{}, nil, err
	} else if ok {
		d, err := inst.describe(ctx, failures)
		if err != nil {
			return server{}, append(refused, err), nil
		}
		if serves(d.Modes, mode) {
			return server{inst: inst, version: d.Version}, refused, nil
		}
		return server{}, refused, nil
	}
	for _, c := range h.scan.Usable(name) {
		if cons != nil && !cons.Check(c.Version) {
			continue
		}
		inst, err := h.instanceFor(c)
		if err != nil {
			return server{}, nil, err
		}
		d, err := inst.describe(ctx, failures)
		if err != nil {
			refused = append(refused, err)
			continue
		}
		if serves(d.Modes, mode) {
			return server{inst: inst, version: d.Version}, refused, nil
		}
	}
	return server{}, refused, nil
}

func (h *Host) notServed(mode, pin, constraint string, refused []error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no plugin serves mode %q", mode)
	if pin != "" {
		fmt.Fprintf(&b, " (pinned to plugin %q", pin)
		if constraint != "" {
			fmt.Fprintf(&b, ", version %q", constraint)
		}
		b.WriteString(")")
	} else if constraint != "" {
		fmt.Fprintf(&b, " at version %q", constraint)
	}
	if modes := h.modes(context.Background()); len(modes) > 0 {
		fmt.Fprintf(&b, "; plugin modes found: %s", strings.Join(modes, ", "))
	}
	fmt.Fprintf(&b, "; searched: %s", strings.Join(h.scan.Dirs, ", "))
	for _, r := range refused {
		fmt.Fprintf(&b, "; %s", r)
	}
	for _, f := range h.refusedFiles() {
		fmt.Fprintf(&b, "; %s", f)
	}
	return &notServedError{msg: b.String(), refused: refused}
}

// notServedError says no plugin serves a mode and keeps why candidates
// were passed over reachable (a lock mismatch, say) for errors.As.
type notServedError struct {
	msg     string
	refused []error
}

func (e *notServedError) Error() string   { return e.msg }
func (e *notServedError) Unwrap() []error { return e.refused }

// Is makes the error a could-not-start error for errors.Is.
func (e *notServedError) Is(target error) bool { return target == sandbox.ErrStart }

// modes describes the newest usable version of every plugin and returns
// every mode they serve, sorted.
func (h *Host) modes(ctx context.Context) []string {
	seen := map[string]bool{}
	for _, name := range h.names() {
		var inst *instance
		if ri, ok, _ := h.reattached(name); ok {
			inst = ri
		} else if usable := h.scan.Usable(name); len(usable) > 0 {
			inst, _ = h.instanceFor(usable[0])
		}
		if inst == nil {
			continue
		}
		d, err := inst.describe(ctx, true)
		h.noteDescribe(inst.cand, err)
		if err != nil {
			log := h.log.Warn
			if isRememberedFailure(err) {
				// Said in full when it failed; a command only passes it over.
				log = h.log.Debug
			}
			log("plugin could not be described", "plugin", name, "error", err)
			continue
		}
		for _, m := range d.Modes {
			seen[m.Name] = true
		}
	}
	modes := make([]string, 0, len(seen))
	for m := range seen {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	return modes
}

// A Host is the ModeSet a RuntimeConfig is checked against when plugins
// serve its modes (codegen.Load, the PromptKit adapter): Serves, Modes
// and ModeHint answer it.
var (
	_ config.ModeSet    = (*Host)(nil)
	_ config.ModeHinter = (*Host)(nil)
)

// Modes lists every mode the installed plugins serve (newest versions),
// starting them to ask.
func (h *Host) Modes() []string { return h.modes(context.Background()) }

// Serves reports whether any plugin serves mode: the newest versions are
// asked first, older ones only when none of those does.
func (h *Host) Serves(mode string) bool {
	for _, m := range h.Modes() {
		if m == mode {
			return true
		}
	}
	s, err := h.resolve(context.Background(), mode, "", "")
	return err == nil && s.inst != nil
}

func serves(modes []plugin.ModeInfo, mode string) bool {
	for _, m := range modes {
		if m.Name == mode {
			return true
		}
	}
	return false
}

// refusedFiles are the plugin files found and refused, each "refused
// PATH: why". A file shadowed by another of the same name and version is
// left out: the other one is the plugin.
func (h *Host) refusedFiles() []string {
	var out []string
	for _, c := range h.scan.Candidates {
		if !c.Usable() && !strings.HasPrefix(c.Refused, "shadowed by ") {
			out = append(out, "refused "+c.Path+": "+c.Refused)
		}
	}
	return out
}

// noteDescribe records why the plugin in c could not say which modes it
// serves (or forgets it, once it could), for ModeHint.
func (h *Host) noteDescribe(c discovery.Candidate, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		delete(h.undescribed, c.Path)
		return
	}
	if h.undescribed == nil {
		h.undescribed = make(map[string]error)
	}
	h.undescribed[c.Path] = err
}

// ModeHint says where plugins were looked for, which plugin files were
// refused and why, and why any plugin found could not say which modes it
// serves, for unknown-mode messages: the mode asked for may be that
// plugin's, and the reason must reach the user whatever the log level.
func (h *Host) ModeHint() string {
	var b strings.Builder
	if len(h.scan.Dirs) == 0 {
		b.WriteString("no plugin directories to search")
	} else {
		b.WriteString("plugin directories searched: " + strings.Join(h.scan.Dirs, ", "))
	}
	for _, f := range h.refusedFiles() {
		fmt.Fprintf(&b, "; %s", f)
	}
	h.mu.Lock()
	paths := make([]string, 0, len(h.undescribed))
	for p := range h.undescribed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "; plugin %s could not be asked which modes it serves: %v", p, h.undescribed[p])
	}
	h.mu.Unlock()
	return b.String()
}
