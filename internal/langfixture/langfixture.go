// Package langfixture holds one small project per language the sandboxd
// images serve (testdata/LANGUAGE), and what sandboxd's tools must say
// about each: a test that passes and one that fails, a lint finding, a
// symbol defined in one file and used in another, and an edit that puts
// a type error in. The image tests run them in a container a provider
// starts, on Docker and on Kubernetes, so every language's tools are
// proven where the agent meets them.
package langfixture

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// files are the projects. A file named NAME.fixture is the project's
// NAME: a go.mod would make testdata/go a module of its own, which embed
// leaves out.
//
//go:embed all:testdata
var files embed.FS

// Fixture is one language's project and what the tools report on it.
type Fixture struct {
	Language string
	// Passed and Failed are run_tests' counts.
	Passed, Failed int
	// Lint is a finding run_lint reports, as sandboxd renders it.
	Lint string
	// Typecheck is a finding run_typecheck reports on the project as
	// written; "" where a type error would stop the tests from building
	// too (Go, Rust), and only Break puts one in.
	Typecheck string
	// Symbol is defined in DefFile at DefLine and used in UseFile.
	Symbol, DefFile, UseFile string
	DefLine                  int
	// LSP says whether the image has a language server for it:
	// find_definition, find_references and rename_symbol answer.
	LSP bool
	// Break is an Edit that puts an error into a file; Diagnostic is
	// what the Edit's diagnostics report, Broken what run_typecheck then
	// does.
	Break              Edit
	Diagnostic, Broken string
}

// Edit is an Edit tool call's arguments.
type Edit struct{ File, Old, New string }

// Args are the Edit tool's arguments.
func (e Edit) Args() map[string]any {
	return map[string]any{"file_path": e.File, "old_string": e.Old, "new_string": e.New}
}

var fixtures = map[string]Fixture{
	codegenimage.Go: {
		Language: codegenimage.Go, Passed: 1, Failed: 1,
		Lint:   "describe.go:8:6: U1000: func unusedHelper is unused",
		Symbol: "Area", DefFile: "area.go", DefLine: 4, UseFile: "double.go", LSP: true,
		Break:      Edit{File: "double.go", Old: "Area(w, h)", New: `Area(w, "h")`},
		Diagnostic: `double.go:4:48: compile: cannot use "h"`, Broken: `double.go:4:48: compile: cannot use "h"`,
	},
	codegenimage.Python: {
		Language: codegenimage.Python, Passed: 1, Failed: 1,
		Lint:      "shapes/describe.py:1:1: F401: 'os' imported but unused",
		Typecheck: `shapes/describe.py:9:12: return-value: Incompatible return value type (got "float", expected "int")`,
		Symbol:    "area", DefFile: "shapes/area.py", DefLine: 1, UseFile: "shapes/double.py", LSP: true,
		Break:      Edit{File: "shapes/double.py", Old: "area(w, h)", New: "area(w, hh)"},
		Diagnostic: "shapes/double.py:5:24: pyflakes: undefined name 'hh'", Broken: `shapes/double.py:5:24: name-defined: Name "hh" is not defined`,
	},
	codegenimage.Node: {
		Language: codegenimage.Node, Passed: 1, Failed: 1,
		Lint:      "src/describe.js:4:9: no-unused-vars: 'unused' is assigned a value but never used.",
		Typecheck: "src/label.ts:5:14: TS2322: Type 'string' is not assignable to type 'number'.",
		Symbol:    "area", DefFile: "src/area.js", DefLine: 3, UseFile: "src/double.js",
		Break:      Edit{File: "src/label.ts", Old: "`${w} x ${h}`", New: "w * h"},
		Diagnostic: "src/label.ts:2:3: TS2322: Type 'number' is not assignable to type 'string'.",
		Broken:     "src/label.ts:2:3: TS2322: Type 'number' is not assignable to type 'string'.",
	},
	codegenimage.Rust: {
		Language: codegenimage.Rust, Passed: 1, Failed: 1,
		Lint:   "src/describe.rs:3:5: clippy::needless_bool: this if-then-else expression returns a bool literal",
		Symbol: "area", DefFile: "src/area.rs", DefLine: 2, UseFile: "src/double.rs",
		Break:      Edit{File: "src/double.rs", Old: "area(w, h)", New: `area(w, "h")`},
		Diagnostic: "src/double.rs:5:31: E0308: mismatched types", Broken: "src/double.rs:5:31: E0308: mismatched types",
	},
}

// Get returns the fixture of a language in codegenimage.Languages.
func Get(language string) (Fixture, bool) {
	f, ok := fixtures[language]
	return f, ok
}

// Files returns the project's files by slash-separated relative path.
func (f Fixture) Files() (map[string][]byte, error) {
	root := path.Join("testdata", f.Language)
	out := map[string][]byte{}
	err := fs.WalkDir(files, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimSuffix(p[len(root)+1:], ".fixture")] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", f.Language, err)
	}
	return out, nil
}

// WriteTo writes the project into dir, its files and directories owned
// by uid:gid (-1 keeps the writer's).
func (f Fixture) WriteTo(dir string, uid, gid int) error {
	all, err := f.Files()
	if err != nil {
		return err
	}
	for rel, content := range all {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		for d := filepath.Dir(p); d != dir && len(d) > len(dir); d = filepath.Dir(d) {
			if err := os.MkdirAll(d, 0o755); err != nil { // #nosec G301 -- a fixture workspace that the agent's user (another UID) must reach
				return err
			}
			if err := os.Lchown(d, uid, gid); err != nil {
				return err
			}
		}
		if err := os.WriteFile(p, content, 0o644); err != nil { // #nosec G306 -- a fixture file that the agent's user (another UID) must read
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}
