package layers

import (
	"slices"
	"strings"
)

// Module is the core module's path; rules name packages relative to it.
const Module = "github.com/altairalabs/promptkit-sandbox"

// A group is a set of our packages that sit in one layer. A pattern is a
// path relative to Module, "dir/..." meaning dir and everything below.
var groups = []struct {
	name     string
	patterns []string
}{
	// Harnesses first: internal/dockertest/... is a harness even though
	// "internal/..." patterns below would not claim it anyway.
	{"harness", []string{
		"internal/ci", "internal/dockertest/...", "internal/egress/egresstest", "internal/escapetest", "internal/kubecluster/...",
		"internal/kubetest", "internal/langfixture", "internal/mcptest", "internal/otlptest",
		"internal/plugintest", "internal/proctest", "internal/provisionbench", "internal/sandboxdimage/...",
		"internal/sandboxtest", "internal/scrapetest", "internal/scrubtest",
		"internal/layers", "plugin/internal/testplugin",
	}},
	// What the hook side and sandboxd both use: the sandbox contract,
	// process control, containment in a directory, secret scrubbing,
	// tracing, and the plugin wire protocol.
	{"shared", []string{"shared/..."}},
	// Building blocks the binaries are made of; none is a product.
	{"blocks", []string{
		"internal/bounded", "internal/codegenimage", "internal/direct", "internal/egress", "internal/egresstunnel", "internal/execrelay", "internal/flock",
		"internal/loopback", "internal/mcpready", "internal/remoteproc", "internal/resident",
		"internal/tether", "internal/warmpool", "hooks/wire",
	}},
	{"config", []string{"config"}},
	{"plugin", []string{"plugin", "plugin/discovery", "plugin/lockfile", "plugin/provision", "plugin/internal/rawhop"}},
	{"hooks", []string{"hooks", "hooks/metrics"}},
	{"host", []string{"plugin/host"}},
	{"backends", []string{"internal/dockerbox", "internal/kubebox", "internal/kubecodegen"}},
	{"codegen", []string{"codegen"}},
	{"sandboxd", []string{"cmd/sandboxd/..."}},
	{"commands", []string{"cmd/...", "examples/...", "deploy/..."}},
}

// mayImport says, for each group, which groups (or single packages) its
// non-test code may import. Anything not listed is refused; a group does
// not import itself unless it says so.
var mayImport = map[string][]string{
	"harness": {"harness", "shared", "blocks", "config", "plugin", "hooks", "host", "backends", "codegen"},
	"shared":  {"shared"},
	"blocks":  {"shared", "blocks"},
	"config":  {"shared", "internal/bounded"},
	"plugin":  {"shared", "plugin"},
	"hooks":   {"shared", "blocks", "config", "hooks"},
	"host":    {"shared", "internal/bounded", "config", "plugin", "hooks/metrics"},
	// A backend is the plugin side only: it never sees the RuntimeConfig,
	// the hook runtime or the host that loads it.
	"backends": {"shared", "blocks", "plugin", "backends"},
	"codegen":  {"shared", "config", "plugin", "host"},
	// sandboxd shares the contract, the image layout, the loopback
	// forwarder (its egress relay) and the egress tunnel (the relay's way
	// out on Kubernetes) with the plugins, and nothing else of theirs.
	"sandboxd": {"shared", "internal/codegenimage", "internal/loopback", "internal/egresstunnel", "sandboxd"},
	"commands": {"shared", "blocks", "config", "plugin", "hooks", "host", "backends", "codegen"},
}

// testMayImport is what a group's tests may import beyond mayImport:
// every test the harnesses, and some tests drive their package from
// above, as its users do (a backend through the plugin host and a
// RuntimeConfig; the plugin protocol and the host around the built-in
// direct backend; the host under the hook runtime).
var testMayImport = map[string][]string{
	"":         {"harness"},
	"backends": {"config", "host"},
	"plugin":   {"blocks"},
	"host":     {"blocks", "hooks"},
}

// initFirst are the packages that take a process over from their
// package initialiser (a cgroup keeper, sandboxd's seal, exec's relay
// to a serve), each with the
// only packages it may import: standard ones every program initialises
// first anyway. Go initialises, of the packages whose imports are done,
// the first by import path, so one import more (strings, fmt,
// path/filepath) would make it wait for most of the program's
// initialisers, which the process it takes over then runs for nothing.
var initFirst = map[string][]string{
	"internal/execrelay":         {"errors", "io", "os", "os/signal", "sync", "syscall", "time", "unsafe"},
	"shared/supervisor/keeper":   {"os", "syscall", "time"},
	"cmd/sandboxd/internal/seal": {"bytes", "errors", "io", "os", "strconv", "syscall", "unsafe"},
}

// forbiddenModules are module path prefixes the core module must not
// depend on at all, directly or not: the core and the plugins never pull
// in PromptKit (the adapter is a module of its own for that).
var forbiddenModules = []string{
	"github.com/AltairaLabs/PromptKit",
	"github.com/AltairaLabs/promptarena",
}

// groupOf returns the group of rel (a path relative to Module), or "".
func groupOf(rel string) string {
	for _, g := range groups {
		for _, p := range g.patterns {
			if matches(p, rel) {
				return g.name
			}
		}
	}
	return ""
}

func matches(pattern, rel string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == dir || strings.HasPrefix(rel, dir+"/")
	}
	return rel == pattern
}

// allowed reports whether a package of group from may import rel.
func allowed(from, rel string, test bool) bool {
	to := groupOf(rel)
	list := mayImport[from]
	if test {
		list = slices.Concat(list, testMayImport[""], testMayImport[from])
	}
	for _, a := range list {
		if a == to || (strings.Contains(a, "/") && matches(a, rel)) {
			return true
		}
	}
	return false
}

// relative returns importPath relative to Module ("." for Module
// itself), or false for a path outside it.
func relative(importPath string) (string, bool) {
	if importPath == Module {
		return ".", true
	}
	return strings.CutPrefix(importPath, Module+"/")
}

// ours returns imp relative to Module when it is a package of the core
// module, or false for another module's package.
func ours(imp string) (string, bool) {
	rel, ok := relative(imp)
	// The nested modules (the PromptKit adapter and the arena source)
	// are not part of the core module's layers.
	if !ok || rel == "promptkit" || strings.HasPrefix(rel, "promptkit/") {
		return "", false
	}
	return rel, true
}
