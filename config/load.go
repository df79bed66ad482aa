package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
)

// Direct is the name and mode of the built-in sandbox that runs hooks on
// the host. It is always available, declared or not.
const Direct = "direct"

// Hook modes.
const (
	// ModeFilter waits for the hook's verdict and denies on any failure.
	ModeFilter = "filter"
	// ModeObserve runs the hook fire-and-forget.
	ModeObserve = "observe"
)

// Timeouts applied when a hook sets no timeout_ms.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultEvalTimeout = 5 * time.Second
)

// ModeSet tells which sandbox modes exist: all a config needs to know of
// what serves them, since opening a sandbox is its caller's business.
// *sandbox.Registry and the plugin host satisfy it.
type ModeSet interface {
	// Serves reports whether mode exists.
	Serves(mode string) bool
	// Modes lists the modes that exist, for the unknown-mode message.
	Modes() []string
}

// ModeHinter is implemented by a ModeSet that can say where it looked for
// modes (a plugin host's search path); the hint is appended to the
// unknown-mode message.
type ModeHinter interface {
	ModeHint() string
}

// Options tune loading.
type Options struct {
	// Modes are the sandbox modes a sandbox entry may use besides the
	// built-in "direct". Nil means only "direct".
	Modes ModeSet
	// ModesFor, when set, is used instead of Modes. It is called once with
	// the file's own spec.plugins.dirs (absolute; nil when the file names
	// none), because which modes exist can depend on plugins found in
	// directories only the file knows. Its error becomes a problem at
	// spec.plugins and mode checks are skipped.
	ModesFor func(pluginDirs []string) (ModeSet, error)
	// LookupEnv expands ${NAME} in sandbox config. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// File is a loaded, validated RuntimeConfig.
type File struct {
	// Path is the path as given to Load or Parse.
	Path string
	// Dir is the absolute directory relative paths resolve against.
	Dir string
	// PluginDirs are spec.plugins.dirs made absolute; nil when the file
	// names none (the plugin host then searches its defaults).
	PluginDirs []string
	// Sandboxes and Hooks are in the order written.
	Sandboxes []Sandbox
	Hooks     []Hook
}

// Sandbox returns the declared sandbox called name. The built-in direct
// sandbox is not declared and is not returned.
func (f *File) Sandbox(name string) (*Sandbox, bool) {
	for i := range f.Sandboxes {
		if f.Sandboxes[i].Name == name {
			return &f.Sandboxes[i], true
		}
	}
	return nil, false
}

// MaxFileSize bounds a RuntimeConfig file: a config is a few kilobytes,
// and a path that names a device or a pipe must not be read forever.
const MaxFileSize = 4 << 20

// Load reads and parses the RuntimeConfig at path. A file that cannot be
// read yields the os error unchanged, one larger than MaxFileSize a
// *bounded.TooLargeError; a file that is not valid yields an *Error.
func Load(path string, opts Options) (*File, error) {
	data, err := bounded.ReadFile(path, MaxFileSize, "RuntimeConfig "+path, "")
	if err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// Parse parses a RuntimeConfig read from path. path is used in problems
// and to resolve relative paths; it is not read. Any validation failure
// is an *Error listing every problem found.
func Parse(path string, data []byte, opts Options) (*File, error) {
	p := newParser(path, opts)
	f := p.parse(data)
	if len(p.problems) > 0 {
		sort.SliceStable(p.problems, func(i, j int) bool {
			a, b := p.problems[i], p.problems[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		return nil, &Error{Problems: p.problems}
	}
	return f, nil
}

// APIVersion and Kind are what PromptKit requires of a RuntimeConfig's
// apiVersion and kind. Both may be left out here; when present they must
// be these, so a Kubernetes manifest or another PromptKit document is not
// taken for a RuntimeConfig.
const (
	APIVersion = "promptkit.altairalabs.ai/v1alpha1"
	Kind       = "RuntimeConfig"
)

// checkIdentity checks apiVersion and kind, when present.
func (p *parser) checkIdentity(top []pair) {
	for key, want := range map[string]string{"apiVersion": APIVersion, "kind": Kind} {
		e, ok := find(top, key)
		if !ok {
			continue
		}
		v := p.deref(e.value, key)
		switch {
		case v.Kind == yaml.ScalarNode && !isNull(v) && v.Value == want:
		case v.Kind == yaml.ScalarNode && !isNull(v):
			got := v.Value
			if len(got) > 60 {
				got = got[:60] + "..."
			}
			p.addAt(e.value, key, "must be %q (a PromptKit RuntimeConfig), got %q", want, got)
		default:
			p.addAt(e.value, key, "must be %q (a PromptKit RuntimeConfig), got %s", want, describe(v))
		}
	}
}

const (
	specKey      = "spec"
	pluginsKey   = "spec.plugins"
	sandboxesKey = "spec.sandboxes"
	hooksKey     = "spec.hooks"
)

// parser accumulates problems while it walks one document.
type parser struct {
	file     string
	dir      string
	opts     Options
	env      func(string) (string, bool)
	problems []Problem
	// budget bounds the nodes visited through aliases and merges, so a
	// few lines of nested anchors cannot make loading take forever.
	budget    int
	exhausted bool
}

const nodeBudget = 100_000

func newParser(path string, opts Options) *parser {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	return &parser{file: path, dir: dir, opts: opts, env: env, budget: nodeBudget}
}

// addAt records a problem at node n (its line and column; none if n is nil).
func (p *parser) addAt(n *yaml.Node, entry, format string, args ...any) {
	pr := Problem{File: p.file, Entry: entry, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		pr.Line, pr.Column = n.Line, n.Column
	}
	p.problems = append(p.problems, pr)
}

func (p *parser) parse(data []byte) *File {
	root := p.document(data)
	if root == nil {
		return nil
	}
	p.checkNodes(root, "")
	top := p.deref(root, "")
	if top.Kind != yaml.MappingNode {
		p.addAt(root, "", "top level must be a mapping, got %s", describe(top))
		return nil
	}
	f := &File{Path: p.file, Dir: p.dir}
	topEntries := p.entries(top, "")
	p.checkIdentity(topEntries)
	spec, ok := find(topEntries, specKey)
	if !ok {
		p.addAt(top, "", "missing required key %q", specKey)
		return f
	}
	specMap := p.deref(spec.value, specKey)
	if specMap.Kind != yaml.MappingNode {
		p.addAt(spec.value, specKey, "must be a mapping, got %s", describe(specMap))
		return f
	}
	var sections struct{ plugins, sandboxes, hooks *pair }
	for _, e := range p.entries(specMap, specKey) {
		switch e.name {
		case "plugins":
			sections.plugins = &e
		case "sandboxes":
			sections.sandboxes = &e
		case "hooks":
			sections.hooks = &e
		}
	}
	modes, modesOK := p.modeSet(f, spec, sections.plugins)
	// declared maps every name in spec.sandboxes to its sandbox, or to nil
	// when the entry itself is broken: a hook naming it must not get a
	// second, misleading "not declared" problem.
	declared := map[string]*Sandbox{}
	if s := sections.sandboxes; s != nil {
		f.Sandboxes = p.sandboxes(s.value, modes, modesOK, declared)
		for i := range f.Sandboxes {
			declared[f.Sandboxes[i].Name] = &f.Sandboxes[i]
		}
	}
	if s := sections.hooks; s != nil {
		f.Hooks = p.hooks(s.value, declared)
	}
	return f
}

// modeSet reads spec.plugins and works out which sandbox modes exist.
// ok is false when they cannot be known, and unknown modes must then not
// be reported.
func (p *parser) modeSet(f *File, spec pair, plugins *pair) (modes ModeSet, ok bool) {
	before := len(p.problems)
	at := spec.key
	if plugins != nil {
		f.PluginDirs = p.pluginDirs(plugins.value)
		at = plugins.key
	}
	if p.opts.ModesFor == nil {
		return p.opts.Modes, true
	}
	if len(p.problems) > before {
		return nil, false
	}
	modes, err := p.opts.ModesFor(f.PluginDirs)
	if err != nil {
		p.addAt(at, pluginsKey, "%s", err.Error())
		return nil, false
	}
	return modes, true
}
