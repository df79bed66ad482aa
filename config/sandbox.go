package config

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Sandbox is one entry of spec.sandboxes.
type Sandbox struct {
	Name string
	Mode string
	// Version is the plugin version constraint as written ("~> 1.0");
	// the plugin host parses it.
	Version string
	// Plugin pins the plugin that serves Mode, by name.
	Plugin string
	// OpenTimeout bounds opening the sandbox (open_timeout):
	// DefaultOpenTimeout when the entry sets none.
	OpenTimeout time.Duration
	// Config holds every other key of the entry, ${NAME}-expanded, as
	// plain Go values: map[string]any, []any, string, int, float64, bool
	// and nil. Never nil, so it encodes as {} rather than null.
	Config map[string]any
	// Line and Column locate the entry's name in the file.
	Line, Column int
}

func (p *parser) sandboxes(v *yaml.Node, modes ModeSet, checkModes bool, declared map[string]*Sandbox) []Sandbox {
	m := p.deref(v, sandboxesKey)
	if isNull(m) {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		p.addAt(v, sandboxesKey, "must be a mapping of sandbox names to sandboxes, got %s", describe(m))
		return nil
	}
	var out []Sandbox
	for _, e := range p.entries(m, sandboxesKey) {
		if e.name != "" && e.name != Direct {
			declared[e.name] = nil
		}
		if sb, ok := p.sandbox(e, modes, checkModes); ok {
			out = append(out, sb)
		}
	}
	return out
}

func (p *parser) sandbox(e pair, modes ModeSet, checkModes bool) (Sandbox, bool) {
	entry := sandboxesKey + "." + e.name
	switch {
	case e.name == "":
		p.addAt(e.key, sandboxesKey, "sandbox name is empty")
		return Sandbox{}, false
	case e.name == Direct:
		p.addAt(e.key, entry, "the name %q is reserved for the built-in sandbox; choose another name", Direct)
		return Sandbox{}, false
	}
	m, ok := p.entryMapping(e, entry)
	if !ok {
		return Sandbox{}, false
	}
	sb := Sandbox{Name: e.name, Config: map[string]any{}, Line: e.key.Line, Column: e.key.Column}
	hasMode := false
	for _, kv := range p.entries(m, entry) {
		switch kv.name {
		case "mode":
			hasMode = true
			if mode, ok := p.str(kv.value, entry, "mode"); ok {
				sb.Mode = mode
				p.checkMode(kv.value, entry, mode, modes, checkModes)
			}
		case "version":
			sb.Version, _ = p.str(kv.value, entry, "version")
		case "plugin":
			sb.Plugin, _ = p.str(kv.value, entry, "plugin")
		case "open_timeout":
			sb.OpenTimeout = p.openTimeout(kv.value, entry)
		default:
			sb.Config[kv.name] = p.value(kv.value, entry, kv.name, map[*yaml.Node]bool{})
		}
	}
	if !hasMode {
		p.addAt(e.key, entry, "missing required key %q", "mode")
	}
	if sb.OpenTimeout == 0 {
		sb.OpenTimeout = DefaultOpenTimeout
	}
	resolvePaths(sb.Config, p.dir)
	return sb, true
}

// DefaultOpenTimeout bounds opening a sandbox whose entry sets no
// open_timeout; a plugin whose Open never returns must not hang the host.
const DefaultOpenTimeout = sandbox.DefaultOpenTimeout

// OpenBound is how long opening s may take: its open_timeout, or
// DefaultOpenTimeout for an entry built without one.
func (s Sandbox) OpenBound() time.Duration {
	if s.OpenTimeout > 0 {
		return s.OpenTimeout
	}
	return DefaultOpenTimeout
}

// openTimeout reads open_timeout, a positive Go duration ("45s").
func (p *parser) openTimeout(v *yaml.Node, entry string) time.Duration {
	s, ok := p.str(v, entry, "open_timeout")
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.addAt(v, entry, "key %q must be a positive duration such as \"30s\", got %q", "open_timeout", s)
		return 0
	}
	return d
}

// pathKeys are the sandbox keys naming a file: a relative path in them
// resolves against the config file's directory. A bare program name
// ("kubectl") is left for a PATH lookup.
var pathKeys = []string{"kubeconfig", "kubectl_path", "docker_path"}

// dirKeys are the sandbox keys naming a directory (a provider's
// workspace): any relative path in them, "repo" included, resolves
// against the config file's directory, since no PATH lookup applies.
var dirKeys = []string{"workspace"}

// resolvePaths makes the relative paths of a sandbox's config absolute
// against dir, in place: the pathKeys and the host side of mounts.
func resolvePaths(cfg map[string]any, dir string) {
	if mounts, ok := cfg["mounts"].([]any); ok {
		cfg["mounts"] = resolveMounts(mounts, dir)
	}
	for _, key := range pathKeys {
		if v, ok := cfg[key].(string); ok {
			cfg[key] = resolvePath(v, dir)
		}
	}
	for _, key := range dirKeys {
		if v, ok := cfg[key].(string); ok && v != "" && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
			cfg[key] = filepath.Join(dir, v)
		}
	}
}

func resolvePath(v, dir string) string {
	if v == "" || filepath.IsAbs(v) || strings.HasPrefix(v, "~") || !(strings.HasPrefix(v, ".") || strings.Contains(v, "/")) {
		return v
	}
	return filepath.Join(dir, v)
}

// resolveMounts makes the host side of "-v"-style mount specs
// (SRC:DST[:opts]) absolute when it is a relative path ("./hooks",
// "data/x"), against dir, as the design asks of every relative path in a
// config. Named volumes (no "/", no leading ".") and anything that is not
// a string are left for the backend to judge.
func resolveMounts(mounts []any, dir string) []any {
	out := make([]any, len(mounts))
	for i, m := range mounts {
		out[i] = m
		spec, ok := m.(string)
		if !ok {
			continue
		}
		src, rest, found := strings.Cut(spec, ":")
		if !found || src == "" || filepath.IsAbs(src) || !(strings.HasPrefix(src, ".") || strings.Contains(src, "/")) {
			continue
		}
		out[i] = filepath.Join(dir, src) + ":" + rest
	}
	return out
}

// entryMapping returns the mapping under a named entry of spec.sandboxes
// or spec.hooks, reporting an empty or malformed one.
func (p *parser) entryMapping(e pair, entry string) (*yaml.Node, bool) {
	m := p.deref(e.value, entry)
	switch {
	case isNull(m):
		p.addAt(e.key, entry, "entry is empty")
		return nil, false
	case m.Kind != yaml.MappingNode:
		p.addAt(e.value, entry, "entry must be a mapping, got %s", describe(m))
		return nil, false
	}
	return m, true
}

func (p *parser) checkMode(at *yaml.Node, entry, mode string, modes ModeSet, checkModes bool) {
	if mode == "" {
		p.addAt(at, entry, "key %q is empty", "mode")
		return
	}
	if mode == Direct || !checkModes {
		return
	}
	if modes != nil && modes.Serves(mode) {
		return
	}
	known := []string{Direct}
	if modes != nil {
		known = append(known, modes.Modes()...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	msg := (&sandbox.UnknownModeError{Mode: mode, Known: known}).Error()
	if h, ok := modes.(ModeHinter); ok {
		if hint := h.ModeHint(); hint != "" {
			msg += "; " + hint
		}
	}
	p.addAt(at, entry, "%s", msg)
}

// value converts a config value to plain Go values, expanding ${NAME} in
// strings. key is its path inside the entry ("mounts[0]", "labels.app"),
// for messages. active holds the lists and mappings being converted, to
// stop at an alias to one of them: an anchor that contains itself.
func (p *parser) value(n *yaml.Node, entry, key string, active map[*yaml.Node]bool) any {
	if !p.spend(n, entry) {
		return nil
	}
	d := p.deref(n, entry)
	if d.Kind == yaml.MappingNode || d.Kind == yaml.SequenceNode {
		if active[d] {
			p.addAt(n, entry, "alias *%s in key %q refers to a value that contains it", n.Value, key)
			return nil
		}
		active[d] = true
		defer delete(active, d)
	}
	switch d.Kind {
	case yaml.MappingNode:
		out := map[string]any{}
		for _, e := range p.entries(d, entry) {
			out[e.name] = p.value(e.value, entry, key+"."+e.name, active)
		}
		return out
	case yaml.SequenceNode:
		out := make([]any, 0, len(d.Content))
		for i, item := range d.Content {
			out = append(out, p.value(item, entry, fmt.Sprintf("%s[%d]", key, i), active))
		}
		return out
	case yaml.ScalarNode:
		return p.scalar(n, d, entry, key)
	}
	return nil
}

// scalar converts one scalar. Only the tags JSON can carry become
// non-strings: the config crosses the plugin boundary as JSON, so a
// timestamp or binary value stays the text that was written.
func (p *parser) scalar(at, d *yaml.Node, entry, key string) any {
	switch d.ShortTag() {
	case nullTag:
		return nil
	case boolTag:
		var b bool
		if err := d.Decode(&b); err != nil {
			p.addAt(at, entry, "key %q: invalid boolean %q", key, d.Value)
		}
		return b
	case intTag:
		var i int
		if err := d.Decode(&i); err != nil {
			p.addAt(at, entry, "key %q: invalid or out-of-range integer %q", key, d.Value)
		}
		return i
	case floatTag:
		var f float64
		if err := d.Decode(&f); err != nil {
			p.addAt(at, entry, "key %q: invalid number %q", key, d.Value)
		} else if math.IsInf(f, 0) || math.IsNaN(f) {
			p.addAt(at, entry, "key %q: %s is not a finite number", key, d.Value)
		}
		return f
	}
	s, issues := expand(d.Value, p.env)
	for _, is := range issues {
		p.addAt(at, entry, "%s", is.message(key))
	}
	return s
}
