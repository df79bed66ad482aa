package lsp

import (
	"path/filepath"
	"slices"
	"strings"
)

// Languages the default servers answer for.
const (
	Go     = "go"
	Python = "python"
)

// Spec says how to run the language server of one language.
type Spec struct {
	Language   string
	Command    string // found on the PATH of the server's environment
	Args       []string
	Extensions []string // the source files it answers for
	// Watched are the other file names whose change it must hear of
	// (go.mod), beside the sources.
	Watched []string
	// Encoding is the position encoding to assume when the server
	// announces none; empty means the protocol's default, UTF-16.
	Encoding Encoding
	// Settings answer workspace/configuration and are sent with
	// workspace/didChangeConfiguration.
	Settings map[string]any
}

// DefaultSpecs are gopls for Go and pylsp for Python. pylsp's linters
// are off: they run on every change and answer nothing asked here.
var DefaultSpecs = []Spec{
	{Language: Go, Command: "gopls", Extensions: []string{".go"}, Watched: []string{"go.mod", "go.sum", "go.work"}},
	// pylsp announces no encoding but counts code points (Python's
	// string indexes), not the UTF-16 units the protocol's default says.
	{Language: Python, Command: "pylsp", Extensions: []string{".py", ".pyi"}, Encoding: UTF32, Settings: map[string]any{
		"pylsp": map[string]any{"plugins": map[string]any{
			"pycodestyle": map[string]any{"enabled": false},
			"pyflakes":    map[string]any{"enabled": false},
			"mccabe":      map[string]any{"enabled": false},
			"pydocstyle":  map[string]any{"enabled": false},
			"autopep8":    map[string]any{"enabled": false},
			"yapf":        map[string]any{"enabled": false},
		}},
	}},
}

// source reports whether path is one of the spec's source files.
func (s Spec) source(path string) bool {
	return slices.Contains(s.Extensions, strings.ToLower(filepath.Ext(path)))
}

// watches reports whether a change to path matters to the server.
func (s Spec) watches(path string) bool {
	return s.source(path) || slices.Contains(s.Watched, filepath.Base(path))
}
