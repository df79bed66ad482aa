package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, tc := range problemCases {
		f.Add([]byte(tc.yaml))
	}
	full, err := os.ReadFile(filepath.Join("testdata", "runtime.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte("a: &a [*a]\nspec: {sandboxes: {s: {mode: direct, x: *a}}}\n"))
	f.Add([]byte("spec:\n  hooks:\n    h: {<<: {command: x}, hook: eval}\n"))

	opts := testOptions(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data, opts)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 || file != nil {
				t.Fatalf("Parse error %T %v with file %v; want a non-empty *Error and no File", err, err, file)
			}
			for _, p := range ce.Problems {
				if p.Msg == "" || p.File != "fuzz.yaml" {
					t.Fatalf("problem without message or file: %#v", p)
				}
			}
			return
		}
		for _, s := range file.Sandboxes {
			if s.Name == "" || s.Name == Direct || s.Mode == "" || s.Config == nil {
				t.Fatalf("invalid sandbox accepted: %#v", s)
			}
		}
		for _, h := range file.Hooks {
			phases, known := hookPhases[h.Type]
			switch {
			case h.Name == "" || h.Command == "" || !known:
				t.Fatalf("invalid hook accepted: %#v", h)
			case h.Mode != ModeFilter && h.Mode != ModeObserve || h.Timeout <= 0:
				t.Fatalf("hook without a valid mode or timeout: %#v", h)
			case h.Type == evalHook && (h.Mode != ModeObserve || h.Phases != nil):
				t.Fatalf("eval hook with phases or filter mode: %#v", h)
			case h.Type != evalHook && len(h.Phases) == 0:
				t.Fatalf("hook without phases: %#v", h)
			}
			for _, ph := range h.Phases {
				if !slices.Contains(phases, ph) {
					t.Fatalf("hook with a foreign phase %q: %#v", ph, h)
				}
			}
			if _, ok := file.Sandbox(h.Sandbox); !ok && h.Sandbox != "" && h.Sandbox != Direct {
				t.Fatalf("hook in an undeclared sandbox: %#v", h)
			}
		}
	})
}
