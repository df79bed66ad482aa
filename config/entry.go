package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
)

// EntryOptions say how SandboxFromEntry resolves what a config file's
// loader would resolve against the file.
type EntryOptions struct {
	// Dir is the directory relative paths resolve against: what the
	// config file's own directory is to Load. Empty means the working
	// directory.
	Dir string
	// LookupEnv resolves ${NAME} (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// SandboxFromEntry builds the Sandbox a spec.sandboxes entry declares
// when the entry arrives already decoded rather than as YAML — as
// PromptKit hands it to a sandbox factory: its keys other than mode, as
// plain Go values. It does what Load does to an entry: version, plugin
// and open_timeout are taken out, ${NAME} is expanded in every string
// (with "$${" for a literal "${"), and relative paths in mounts and the
// path keys resolve against opts.Dir. Every problem is reported, each
// naming its key; the error is a *EntryError.
func SandboxFromEntry(name, mode string, entry map[string]any, opts EntryOptions) (Sandbox, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Sandbox{}, fmt.Errorf("sandbox %q: resolve relative paths: %w", name, err)
		}
		dir = wd
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e := &EntryError{Sandbox: name}
	sb := Sandbox{Name: name, Mode: mode, OpenTimeout: DefaultOpenTimeout, Config: map[string]any{}}
	for _, key := range sortedKeys(entry) {
		v := expandValue(entry[key], key, lookup, e)
		switch key {
		case "mode":
			if s, ok := v.(string); !ok || s != mode {
				e.add("key %q is %v, but the sandbox is opened for mode %q", key, v, mode)
			}
		case "version":
			sb.Version = e.str(key, v)
		case "plugin":
			sb.Plugin = e.str(key, v)
		case "open_timeout":
			sb.OpenTimeout = e.duration(key, v)
		default:
			sb.Config[key] = v
		}
	}
	if len(e.Problems) > 0 {
		return Sandbox{}, e
	}
	resolvePaths(sb.Config, dir)
	return sb, nil
}

// EntryError lists every problem of one decoded spec.sandboxes entry.
type EntryError struct {
	Sandbox  string
	Problems []string
}

func (e *EntryError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("sandbox %q: %s", e.Sandbox, e.Problems[0])
	}
	msg := fmt.Sprintf("sandbox %q: %d problems:", e.Sandbox, len(e.Problems))
	for _, p := range e.Problems {
		msg += "\n  - " + p
	}
	return msg
}

func (e *EntryError) add(format string, args ...any) {
	e.Problems = append(e.Problems, fmt.Sprintf(format, args...))
}

func (e *EntryError) str(key string, v any) string {
	s, ok := v.(string)
	if !ok {
		e.add("key %q must be a string, got %T", key, v)
	}
	return s
}

// duration reads open_timeout: a positive Go duration ("45s").
func (e *EntryError) duration(key string, v any) time.Duration {
	s, ok := v.(string)
	if !ok {
		e.add("key %q must be a duration such as \"30s\", got %T", key, v)
		return DefaultOpenTimeout
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		e.add("key %q must be a positive duration such as \"30s\", got %q", key, s)
		return DefaultOpenTimeout
	}
	return d
}

// expandValue copies v, expanding ${NAME} in every string it holds. key is
// v's path in the entry, for messages. The copy leaves the caller's map
// untouched: PromptKit keeps it, and may hand it over again.
func expandValue(v any, key string, lookup func(string) (string, bool), e *EntryError) any {
	switch v := v.(type) {
	case string:
		s, issues := expand(v, lookup)
		for _, is := range issues {
			e.add("%s", is.message(key))
		}
		return s
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range sortedKeys(v) {
			out[k] = expandValue(v[k], key+"."+k, lookup, e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = expandValue(item, fmt.Sprintf("%s[%d]", key, i), lookup, e)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = expandValue(item, fmt.Sprintf("%s[%d]", key, i), lookup, e)
		}
		return out
	case nil, bool, int, int64, uint64, float64:
		return v
	}
	e.add("key %q: unsupported value of type %T", key, v)
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ErrEntry matches every *EntryError with errors.Is.
var ErrEntry = errors.New("invalid sandbox entry")

// Is makes errors.Is(err, ErrEntry) true for an *EntryError.
func (e *EntryError) Is(target error) bool { return target == ErrEntry }
