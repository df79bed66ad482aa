package arena

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Args are an MCP server entry's source_args, checked. Paths are
// absolute: relative ones resolve against the working directory, where
// promptarena runs.
type Args struct {
	// Config is the RuntimeConfig file declaring the sandbox.
	Config string
	// Sandbox names the sandbox in it: one of a provider mode,
	// docker_codegen or kubectl_codegen.
	Sandbox string
	// Workspace, when set, replaces the sandbox's workspace key: the host
	// directory the agent works on (docker_codegen).
	Workspace string
	// Image and Language, when set, replace the sandbox's image and
	// language keys.
	Image, Language string
	// PluginDir, when set, is the only directory searched for plugins;
	// otherwise the default search path is (docs/plugins.md).
	PluginDir string
}

// The keys source_args may hold. mountsKey is arena's own: it adds the
// config's skill directories under it (read-only mounts at
// /skills/NAME) to every source's args. A codegen sandbox mounts its
// workspace and nothing else, and the agent reaches skills through
// PromptKit's skill tools anyway, so the key is accepted and left
// unused rather than failing every config that has skills.
const (
	keyConfig    = "config"
	keySandbox   = "sandbox"
	keyWorkspace = "workspace"
	keyImage     = "image"
	keyLanguage  = "language"
	keyPluginDir = "plugin_dir"
	mountsKey    = "mounts"
)

var knownKeys = []string{keyConfig, keyImage, keyLanguage, keyPluginDir, keySandbox, keyWorkspace}

// templateMark starts an arena template variable. Arena replaces
// {{scenario.NAME}} with the scenario's variable NAME and leaves a name
// the scenario does not define as it is.
const templateMark = "{{scenario."

// ParseArgs checks source_args and makes their paths absolute. Every
// problem is reported, each naming its key: an unknown key, a value that
// is not a string, a required key missing or empty, a template variable
// the scenario does not define, a workspace that is not a directory.
func ParseArgs(raw map[string]any) (Args, error) {
	var problems []error
	bad := func(err error) { problems = append(problems, err) }
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := map[string]string{}
	for _, k := range keys {
		if k == mountsKey {
			continue
		}
		if !slices.Contains(knownKeys, k) {
			bad(fmt.Errorf("source_args: unknown key %q (known: %s)", k, strings.Join(knownKeys, ", ")))
			continue
		}
		s, ok := raw[k].(string)
		switch {
		case !ok:
			bad(fmt.Errorf("source_args.%s: want a string, got %T %v", k, raw[k], raw[k]))
		case strings.Contains(s, templateMark):
			bad(fmt.Errorf("source_args.%s: %q names a template variable the scenario does not define (spec.variables)", k, s))
		case strings.TrimSpace(s) == "":
			bad(fmt.Errorf("source_args.%s: must not be empty (leave it out instead)", k))
		default:
			vals[k] = strings.TrimSpace(s)
		}
	}
	for k, what := range map[string]string{
		keyConfig:  "the RuntimeConfig file declaring the sandbox",
		keySandbox: "the name of a sandbox of a provider mode (docker_codegen, kubectl_codegen) in that file",
	} {
		if _, given := raw[k]; !given {
			bad(fmt.Errorf("source_args.%s is required: %s", k, what))
		}
	}
	for _, k := range []string{keyConfig, keyWorkspace, keyPluginDir} {
		if v, ok := vals[k]; ok {
			abs, err := filepath.Abs(v)
			if err != nil {
				bad(fmt.Errorf("source_args.%s: %w", k, err))
				continue
			}
			vals[k] = abs
		}
	}
	if ws, ok := vals[keyWorkspace]; ok {
		if fi, err := os.Stat(ws); err != nil {
			bad(fmt.Errorf("source_args.workspace: %w", err))
		} else if !fi.IsDir() {
			bad(fmt.Errorf("source_args.workspace: %s is not a directory", ws))
		}
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return Args{}, errors.Join(problems...)
	}
	return Args{
		Config:    vals[keyConfig],
		Sandbox:   vals[keySandbox],
		Workspace: vals[keyWorkspace],
		Image:     vals[keyImage],
		Language:  vals[keyLanguage],
		PluginDir: vals[keyPluginDir],
	}, nil
}
