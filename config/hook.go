package config

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Hook is one entry of spec.hooks.
type Hook struct {
	Name string
	// Command is the program to run. For a hook that runs on the host a
	// relative path containing "/" has been resolved against the config
	// file's directory; otherwise it is as written (see the package doc).
	Command string
	Args    []string
	// Env entries are "KEY=value", or a bare "KEY" forwarding the host's
	// value.
	Env []string
	// Type is provider, tool, session or eval.
	Type string
	// Phases the hook runs at, in the order written; nil for eval hooks,
	// which run once per eval result.
	Phases []string
	// Mode is ModeFilter or ModeObserve, defaulted when not written.
	Mode string
	// Timeout is timeout_ms, or the default for the hook type.
	Timeout time.Duration
	// Sandbox names a declared sandbox; "" or "direct" is the built-in
	// direct sandbox.
	Sandbox string
	// Line and Column locate the entry's name in the file.
	Line, Column int
}

// hookTypes lists the hook types in the order the documentation uses, and
// hookPhases the phases of each. The wire package keeps the same table
// for what it sends; this one decides what a config may ask for.
var (
	hookTypes  = []string{"provider", "tool", "session", "eval"}
	hookPhases = map[string][]string{
		"provider": {"before_call", "after_call"},
		"tool":     {"before_execution", "after_execution"},
		"session":  {"session_start", "session_update", "session_end"},
		"eval":     nil,
	}
	hookModes = []string{ModeFilter, ModeObserve}
	hookKeys  = []string{"args", "command", "env", "hook", "mode", "phases", "sandbox", "timeout_ms"}
)

const evalHook = "eval"

// maxTimeoutMs is the largest timeout_ms a time.Duration can hold.
const maxTimeoutMs = math.MaxInt64 / int64(time.Millisecond)

func (p *parser) hooks(v *yaml.Node, declared map[string]*Sandbox) []Hook {
	m := p.deref(v, hooksKey)
	if isNull(m) {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		p.addAt(v, hooksKey, "must be a mapping of hook names to hooks, got %s", describe(m))
		return nil
	}
	var out []Hook
	for _, e := range p.entries(m, hooksKey) {
		if h, ok := p.hook(e, declared); ok {
			out = append(out, h)
		}
	}
	return out
}

func (p *parser) hook(e pair, declared map[string]*Sandbox) (Hook, bool) {
	entry := hooksKey + "." + e.name
	if e.name == "" {
		p.addAt(e.key, hooksKey, "hook name is empty")
		return Hook{}, false
	}
	m, ok := p.entryMapping(e, entry)
	if !ok {
		return Hook{}, false
	}
	h := Hook{Name: e.name, Line: e.key.Line, Column: e.key.Column}
	fields := map[string]pair{}
	for _, kv := range p.entries(m, entry) {
		if !slices.Contains(hookKeys, kv.name) {
			p.addAt(kv.key, entry, "%s", unknownKey(kv.name, hookKeys))
			continue
		}
		fields[kv.name] = kv
	}
	required := func(key string) (string, *yaml.Node) {
		kv, ok := fields[key]
		if !ok {
			p.addAt(e.key, entry, "missing required key %q", key)
			return "", nil
		}
		s, ok := p.str(kv.value, entry, key)
		if ok && s == "" {
			p.addAt(kv.value, entry, "key %q is empty", key)
		}
		return s, kv.value
	}

	command, at := required("command")
	if strings.ContainsRune(command, 0) {
		p.addAt(at, entry, "key %q contains a NUL byte", "command")
	}
	typ, at := required("hook")
	if typ != "" {
		if _, ok := hookPhases[typ]; ok {
			h.Type = typ
		} else {
			p.addAt(at, entry, "unknown hook type %q (valid: %s)", typ, strings.Join(hookTypes, ", "))
		}
	}
	if kv, ok := fields["args"]; ok {
		var nodes []*yaml.Node
		h.Args, nodes, _ = p.strList(kv.value, entry, "args")
		for i, a := range h.Args {
			if strings.ContainsRune(a, 0) {
				p.addAt(nodes[i], entry, "args[%d] contains a NUL byte", i)
			}
		}
	}
	if kv, ok := fields["env"]; ok {
		h.Env = p.envList(kv.value, entry)
	}
	h.Phases = p.phases(h.Type, fields, e.key, entry)
	h.Mode = p.hookMode(h.Type, fields, entry)
	h.Timeout = p.timeout(h.Type, fields, entry)
	if kv, ok := fields["sandbox"]; ok {
		h.Sandbox, _ = p.str(kv.value, entry, "sandbox")
		if _, ok := declared[h.Sandbox]; !ok && h.Sandbox != "" && h.Sandbox != Direct {
			p.addAt(kv.value, entry, "sandbox %q is not declared in %s (declared: %s)", h.Sandbox, sandboxesKey, declaredNames(declared))
		}
	}
	h.Command = command
	if runsOnHost(h.Sandbox, declared) {
		h.Command = p.hostCommand(command)
	}
	return h, true
}

func declaredNames(declared map[string]*Sandbox) string {
	if len(declared) == 0 {
		return "none"
	}
	names := make([]string, 0, len(declared))
	for n := range declared {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// runsOnHost reports whether a hook in sandbox name runs as a local
// process, where a relative command means a file next to the config.
func runsOnHost(name string, declared map[string]*Sandbox) bool {
	if name == "" || name == Direct {
		return true
	}
	sb := declared[name]
	return sb != nil && sb.Mode == Direct
}

// hostCommand resolves a relative path against the config's directory,
// leaving absolute paths and bare names (found through PATH) alone.
func (p *parser) hostCommand(cmd string) string {
	if cmd == "" || filepath.IsAbs(cmd) || !strings.ContainsRune(cmd, '/') && !strings.ContainsRune(cmd, filepath.Separator) {
		return cmd
	}
	return filepath.Join(p.dir, cmd)
}

// envList reads the env list: each item a variable name, optionally "=value".
func (p *parser) envList(v *yaml.Node, entry string) []string {
	env, nodes, _ := p.strList(v, entry, "env")
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "":
			p.addAt(nodes[i], entry, "env[%d] %q has an empty variable name", i, kv)
		case !validName(name):
			p.addAt(nodes[i], entry, "env[%d] %q has an invalid variable name %q (use letters, digits and underscores, not starting with a digit)", i, kv, name)
		case strings.ContainsRune(kv, 0):
			p.addAt(nodes[i], entry, "env[%d] contains a NUL byte", i)
		}
	}
	return env
}

func (p *parser) phases(typ string, fields map[string]pair, entryKey *yaml.Node, entry string) []string {
	kv, given := fields["phases"]
	var phases []string
	var nodes []*yaml.Node
	listOK := true
	if given {
		phases, nodes, listOK = p.strList(kv.value, entry, "phases")
	}
	switch typ {
	case "":
		return nil // unknown or missing type, already reported
	case evalHook:
		if len(phases) > 0 {
			p.addAt(kv.key, entry, "eval hooks have no phases")
		}
		return nil
	}
	valid := hookPhases[typ]
	switch {
	case !given:
		p.addAt(entryKey, entry, "missing required key %q (valid: %s)", "phases", strings.Join(valid, ", "))
		return nil
	case listOK && len(phases) == 0:
		p.addAt(kv.value, entry, "key %q is empty (valid: %s)", "phases", strings.Join(valid, ", "))
		return nil
	}
	for i, ph := range phases {
		switch {
		case !slices.Contains(valid, ph):
			p.addAt(nodes[i], entry, "phase %q is not a %s phase (valid: %s)", ph, typ, strings.Join(valid, ", "))
		case slices.Contains(phases[:i], ph):
			p.addAt(nodes[i], entry, "phase %q is listed twice", ph)
		}
	}
	return phases
}

func (p *parser) hookMode(typ string, fields map[string]pair, entry string) string {
	def := ModeFilter
	if typ == evalHook {
		def = ModeObserve
	}
	kv, ok := fields["mode"]
	if !ok {
		return def
	}
	mode, ok := p.str(kv.value, entry, "mode")
	switch {
	case !ok || mode == "":
		return def
	case !slices.Contains(hookModes, mode):
		p.addAt(kv.value, entry, "unknown mode %q (valid: %s)", mode, strings.Join(hookModes, ", "))
	case typ == evalHook && mode == ModeFilter:
		p.addAt(kv.value, entry, "eval hooks always run in observe mode; mode %q is not allowed", mode)
	}
	return mode
}

func (p *parser) timeout(typ string, fields map[string]pair, entry string) time.Duration {
	def := DefaultTimeout
	if typ == evalHook {
		def = DefaultEvalTimeout
	}
	kv, ok := fields["timeout_ms"]
	if !ok {
		return def
	}
	d := p.deref(kv.value, entry)
	if isNull(d) {
		return def
	}
	if d.Kind == yaml.ScalarNode && d.ShortTag() == intTag {
		var ms int64
		if err := d.Decode(&ms); err == nil && ms > 0 {
			if ms > maxTimeoutMs {
				p.addAt(kv.value, entry, "key %q is too large (at most %d milliseconds)", "timeout_ms", maxTimeoutMs)
				return def
			}
			return time.Duration(ms) * time.Millisecond
		}
	}
	p.addAt(kv.value, entry, "key %q must be a positive integer (milliseconds), got %s", "timeout_ms", shown(d))
	return def
}

// shown quotes a scalar as written, or describes anything else.
func shown(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return describe(n)
	}
	switch n.ShortTag() {
	case intTag, floatTag, boolTag:
		return n.Value
	}
	return fmt.Sprintf("%q", n.Value)
}
