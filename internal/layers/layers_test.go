package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTreeKeepsItsLayers: every package of the core module sits in a
// layer and imports only what its layer may, and nothing of the module
// depends on PromptKit.
func TestTreeKeepsItsLayers(t *testing.T) {
	pkgs := list(t, ".")
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	for _, line := range Check(pkgs) {
		t.Error(line)
	}
}

// TestAdapterLeavesArenaOut: a PromptKit SDK user who imports the
// adapter never pulls in PromptArena; the arena source is a module of
// its own for that.
func TestAdapterLeavesArenaOut(t *testing.T) {
	for _, p := range list(t, "promptkit") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "github.com/AltairaLabs/promptarena") {
				t.Errorf("%s depends on %s", p.ImportPath, d)
			}
		}
	}
}

// TestCheckRefuses: each kind of violation is reported, in words that
// name both ends.
func TestCheckRefuses(t *testing.T) {
	p := func(rel string) string { return Module + "/" + rel }
	cases := []struct {
		name string
		pkg  Package
		want string
	}{
		{"shared imports above it", Package{ImportPath: p("shared/shell"), Imports: []string{p("config")}},
			"shared/shell (shared) imports config (config)"},
		{"sandboxd imports a plugin's package", Package{ImportPath: p("cmd/sandboxd/internal/server"), Imports: []string{p("internal/warmpool")}},
			"cmd/sandboxd/internal/server (sandboxd) imports internal/warmpool (blocks)"},
		{"a backend imports the RuntimeConfig", Package{ImportPath: p("internal/dockerbox"), Imports: []string{p("config")}},
			"internal/dockerbox (backends) imports config (config)"},
		{"shipped code imports a harness", Package{ImportPath: p("hooks"), Imports: []string{p("internal/sandboxtest")}},
			"hooks (hooks) imports internal/sandboxtest (harness)"},
		{"a test imports a backend", Package{ImportPath: p("shared/shell"), XTestImports: []string{p("internal/dockerbox")}},
			"shared/shell (shared) has tests that import internal/dockerbox (backends)"},
		{"a package in no layer", Package{ImportPath: p("newthing")},
			"newthing belongs to no layer"},
		{"a package that takes a process over from its initialiser imports more", Package{ImportPath: p("shared/supervisor/keeper"), Imports: []string{"os", "strings"}},
			"shared/supervisor/keeper imports strings: it takes a process over from its initialiser, and may import only os, syscall, time"},
		{"the core depends on PromptKit", Package{ImportPath: p("plugin"), Deps: []string{"github.com/AltairaLabs/PromptKit/sdk"}},
			"plugin depends on github.com/AltairaLabs/PromptKit/sdk"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check([]Package{c.pkg})
			if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
				t.Errorf("Check = %q, want one line starting %q", got, c.want)
			}
		})
	}
	ok := Package{ImportPath: p("hooks"), Imports: []string{p("config"), p("shared/shell"), "fmt"},
		TestImports: []string{p("internal/sandboxtest")}}
	if got := Check([]Package{ok}); len(got) != 0 {
		t.Errorf("Check of allowed imports = %q, want nothing", got)
	}
}

// list runs go list over the module in dir, relative to the core
// module's root.
func list(t *testing.T, dir string) []Package {
	t.Helper()
	if pkgs, ok := listed[dir]; ok {
		return pkgs
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,GoFiles,Imports,TestImports,XTestImports,Deps", "./...")
	cmd.Dir = filepath.Join(root(t), dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	listed[dir] = pkgs
	return pkgs
}

// listed keeps what list found, by directory: several tests ask.
var listed = map[string][]Package{}

// root is the core module's root directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
