package shell

import (
	"os"
	"strings"
)

// MergeEnv applies Request.Env-style entries to base and returns a new
// slice (base is not modified). An entry "KEY=value" sets KEY verbatim,
// replacing any value from base; a bare "KEY" takes lookup's value for KEY
// and is dropped when lookup has none (or lookup is nil). Empty entries and
// entries with an empty key are ignored. When a key repeats, the last
// value wins and keeps the position of the first.
//
// Local backends pass os.Environ and os.LookupEnv; a backend that runs the
// process elsewhere passes that place's baseline and still resolves bare
// keys against the host, which is what a hook author means by forwarding.
func MergeEnv(base, entries []string, lookup func(string) (string, bool)) []string {
	out := make([]string, 0, len(base)+len(entries))
	at := make(map[string]int, len(base)+len(entries))
	set := func(key, kv string) {
		if i, ok := at[key]; ok {
			out[i] = kv
			return
		}
		at[key] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		set(key, kv)
	}
	for _, e := range entries {
		key, _, hasValue := strings.Cut(e, "=")
		switch {
		case key == "":
		case hasValue:
			set(key, e)
		case lookup != nil:
			if v, ok := lookup(key); ok {
				set(key, key+"="+v)
			}
		}
	}
	return out
}

// processEnv is the environment for exec.Cmd.Env. nil means "inherit the
// host's", which lets os/exec skip the merge on the common path.
func processEnv(clean bool, entries []string) []string {
	if !clean && len(entries) == 0 {
		return nil
	}
	var base []string
	if !clean {
		base = os.Environ()
	}
	return MergeEnv(base, entries, os.LookupEnv)
}

// EnvValue is key's value in env, a list of "KEY=value" entries in which
// the last entry for a key wins (as in MergeEnv's output and os/exec's
// Env); ok is false when key has no entry.
func EnvValue(env []string, key string) (value string, ok bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, found := strings.Cut(env[i], "="); found && k == key {
			return v, true
		}
	}
	return "", false
}
