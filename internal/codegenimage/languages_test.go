package codegenimage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestImageFor(t *testing.T) {
	for _, tc := range []struct {
		langs []string
		want  string
	}{
		{nil, "promptkit/sandboxd:0.1.0"},
		{[]string{"go"}, "promptkit/sandboxd:0.1.0"},
		{[]string{"python"}, "promptkit/sandboxd-python:0.1.0"},
		{[]string{"python", "go"}, "promptkit/sandboxd-go-python:0.1.0"},
		{[]string{"rust", "node", "node"}, "promptkit/sandboxd-node-rust:0.1.0"},
	} {
		if got := ImageFor("", tc.langs...); got != tc.want {
			t.Errorf("ImageFor(%q) = %q, want %q", tc.langs, got, tc.want)
		}
	}
	if got := ImageFor("2.0.0", Python); got != "promptkit/sandboxd-python:2.0.0" {
		t.Errorf("ImageFor(2.0.0, python) = %q", got)
	}
}

func TestParseLanguages(t *testing.T) {
	got, err := ParseLanguages("Rust, go python,go")
	if err != nil || !slices.Equal(got, []string{"go", "python", "rust"}) {
		t.Errorf("ParseLanguages = %q, %v", got, err)
	}
	for _, bad := range []string{"", " , ", "java", "go,cobol"} {
		if _, err := ParseLanguages(bad); err == nil {
			t.Errorf("ParseLanguages(%q) took it", bad)
		}
	}
}

// TestDetect: markers at the root and one level down count, in the
// order of Languages, with the first marker found as the evidence;
// deeper ones, hidden and vendored directories, and symlinks do not.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"pyproject.toml", "web/package.json", "api/go.mod", "api/go.work",
		"a/b/Cargo.toml", ".hidden/Cargo.toml", "node_modules/x/Cargo.toml", "vendor/Cargo.toml",
	} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "Cargo.toml")); err != nil {
		t.Fatal(err)
	}
	d, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Languages, []string{"go", "python", "node"}) {
		t.Errorf("languages %q, want go, python, node", d.Languages)
	}
	if got, want := d.String(), "go (api/go.mod), python (pyproject.toml), node (web/package.json)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}

	empty, err := Detect(t.TempDir())
	if err != nil || len(empty.Languages) != 0 || empty.String() != "no language marker" {
		t.Errorf("empty workspace: %+v, %v", empty, err)
	}
	if _, err := Detect(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing workspace detected nothing without an error")
	}
}
