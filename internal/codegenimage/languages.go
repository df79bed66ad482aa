package codegenimage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The languages an image can serve: their toolchains, test runners,
// linters, type checkers and language servers are in it.
const (
	Go     = "go"
	Python = "python"
	Node   = "node"
	Rust   = "rust"
)

// DefaultLanguage is what an image serves when nothing says otherwise;
// Image(version) is its image.
const DefaultLanguage = Go

// Languages are all the languages, in the order their layers stack in an
// image that serves several.
var Languages = []string{Go, Python, Node, Rust}

// LanguagesLabel is the image label listing the languages it serves,
// comma-separated in the order of Languages.
const LanguagesLabel = "org.promptkit.sandboxd.languages"

// markers are the files at a project's root that say its language. They
// are what sandboxd's run_tests, run_lint and run_typecheck detect a
// project by, and what a provider picks an image by.
var markers = map[string][]string{
	Go:     {"go.mod", "go.work"},
	Python: {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pytest.ini", "tox.ini"},
	Node:   {"package.json", "tsconfig.json"},
	Rust:   {"Cargo.toml"},
}

// Markers returns the files that mark a project of lang.
func Markers(lang string) []string { return slices.Clone(markers[lang]) }

// ParseLanguages reads a language list as a config key or a flag takes
// it: names from Languages, separated by commas or spaces, in any order.
// It returns them in the order of Languages, without repeats.
func ParseLanguages(s string) ([]string, error) {
	var langs []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		f = strings.ToLower(f)
		if !slices.Contains(Languages, f) {
			return nil, fmt.Errorf("unknown language %q (known: %s)", f, strings.Join(Languages, ", "))
		}
		langs = append(langs, f)
	}
	if len(langs) == 0 {
		return nil, fmt.Errorf("no language given (known: %s)", strings.Join(Languages, ", "))
	}
	return sortLanguages(langs), nil
}

// sortLanguages orders langs as Languages does and drops repeats.
func sortLanguages(langs []string) []string {
	var out []string
	for _, l := range Languages {
		if slices.Contains(langs, l) {
			out = append(out, l)
		}
	}
	return out
}

// ImageFor returns the reference of the image that serves langs at
// version ("" for Version): Image(version) for Go alone, else
// Repository-LANG[-LANG...]:version, e.g. promptkit/sandboxd-python:0.1.0
// or promptkit/sandboxd-go-python:0.1.0. langs must be known languages.
func ImageFor(version string, langs ...string) string {
	langs = sortLanguages(langs)
	if len(langs) == 0 || slices.Equal(langs, []string{DefaultLanguage}) {
		return Image(version)
	}
	if version == "" {
		version = Version
	}
	return Repository + "-" + strings.Join(langs, "-") + ":" + version
}

// Detection is what a workspace's files say about its languages.
type Detection struct {
	// Languages found, in the order of Languages; empty when no marker
	// was found.
	Languages []string
	// Evidence names, per language, the first marker found for it,
	// relative to the workspace (e.g. "api/go.mod").
	Evidence map[string]string
}

// String says what was found, e.g. "go (go.mod), python (tools/setup.py)".
func (d Detection) String() string {
	if len(d.Languages) == 0 {
		return "no language marker"
	}
	parts := make([]string, len(d.Languages))
	for i, l := range d.Languages {
		parts[i] = fmt.Sprintf("%s (%s)", l, d.Evidence[l])
	}
	return strings.Join(parts, ", ")
}

// detectDepth is how deep below the workspace's root Detect looks for
// markers: a repository's root and its top-level directories
// (backend/go.mod, web/package.json), which is where monorepos keep
// their projects; deeper markers are usually vendored or test data.
const detectDepth = 1

// detectMaxEntries bounds the directory entries Detect reads, so a
// workspace with a huge top level cannot make provisioning slow.
const detectMaxEntries = 10000

// skippedDirs hold other projects' files, not the workspace's own.
var skippedDirs = []string{"node_modules", "vendor", "third_party", "testdata", "target"}

// Detect looks for language markers in dir and its top-level
// directories (hidden ones and skippedDirs excepted). A marker counts
// only when it is a regular file (a symlink is not followed).
func Detect(dir string) (Detection, error) {
	d := Detection{Evidence: map[string]string{}}
	seen := 0
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		entries, err := os.ReadDir(filepath.Join(dir, rel))
		if err != nil {
			if rel != "" && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
				return nil // a subdirectory the provider may not read says nothing
			}
			return fmt.Errorf("detecting the workspace's languages: %w", err)
		}
		var subdirs []string
		for _, e := range entries {
			if seen++; seen > detectMaxEntries {
				return nil
			}
			name := e.Name()
			if e.IsDir() {
				if !strings.HasPrefix(name, ".") && !slices.Contains(skippedDirs, name) {
					subdirs = append(subdirs, name)
				}
				continue
			}
			if !e.Type().IsRegular() {
				continue
			}
			for _, lang := range Languages {
				if _, found := d.Evidence[lang]; !found && slices.Contains(markers[lang], name) {
					d.Evidence[lang] = filepath.ToSlash(filepath.Join(rel, name))
				}
			}
		}
		if depth >= detectDepth {
			return nil
		}
		for _, sub := range subdirs {
			if err := walk(filepath.Join(rel, sub), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return Detection{}, err
	}
	for _, lang := range Languages {
		if _, ok := d.Evidence[lang]; ok {
			d.Languages = append(d.Languages, lang)
		}
	}
	return d, nil
}
