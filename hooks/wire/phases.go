package wire

import (
	"fmt"
	"strings"
)

// Hook types, as written in a RuntimeConfig's spec.hooks.*.hook and in the
// "hook" key of the stdin envelope.
const (
	HookProvider = "provider"
	HookTool     = "tool"
	HookSession  = "session"
	HookEval     = "eval"
)

// Phases, as written in spec.hooks.*.phases and in the envelope's "phase".
const (
	PhaseBeforeCall      = "before_call"
	PhaseAfterCall       = "after_call"
	PhaseBeforeExecution = "before_execution"
	PhaseAfterExecution  = "after_execution"
	PhaseSessionStart    = "session_start"
	PhaseSessionUpdate   = "session_update"
	PhaseSessionEnd      = "session_end"
)

// HookTypes returns every hook type PromptKit runs exec hooks for, in the
// order they are documented. The slice is fresh; callers may modify it.
func HookTypes() []string {
	return []string{HookProvider, HookTool, HookSession, HookEval}
}

// Phases returns the phases a hook type can run in. ok is false for an
// unknown hook type. Eval hooks run once per eval result and have no phases,
// so they report (nil, true). The slice is fresh; callers may modify it.
func Phases(hook string) (phases []string, ok bool) {
	switch hook {
	case HookProvider:
		return []string{PhaseBeforeCall, PhaseAfterCall}, true
	case HookTool:
		return []string{PhaseBeforeExecution, PhaseAfterExecution}, true
	case HookSession:
		return []string{PhaseSessionStart, PhaseSessionUpdate, PhaseSessionEnd}, true
	case HookEval:
		return nil, true
	}
	return nil, false
}

// checkHookPhase reports, in words a config author can act on, why hook and
// phase do not name a call PromptKit makes.
func checkHookPhase(hook, phase string) error {
	phases, ok := Phases(hook)
	if !ok {
		return fmt.Errorf("unknown hook type %q (want %s)", hook, orList(HookTypes()))
	}
	if hook == HookEval {
		if phase != "" {
			return fmt.Errorf("hook %q has no phases, got phase %q", hook, phase)
		}
		return nil
	}
	for _, p := range phases {
		if p == phase {
			return nil
		}
	}
	if phase == "" {
		return fmt.Errorf("hook %q needs a phase (%s)", hook, orList(phases))
	}
	return fmt.Errorf("hook %q has no phase %q (want %s)", hook, phase, orList(phases))
}

// orList renders ["a","b","c"] as "a, b or c".
func orList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
