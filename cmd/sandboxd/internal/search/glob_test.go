package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ignoreTree is a workspace with every kind of ignore rule; visible lists
// what git would show of it.
var ignoreTree = map[string]string{
	".gitignore":            "secrets.env\n*.log\n/gen/\n/cmd/local.go\n",
	"secrets.env":           "KEY=secret",
	"ok.env":                "KEY=ok",
	"app.log":               "KEY=log",
	"gen/g.go":              "package gen // KEY",
	"cmd/main.go":           "package main // KEY",
	"cmd/local.go":          "package main // KEY local",
	"sub/.gitignore":        "deep/\n",
	"sub/a.go":              "package sub // KEY",
	"sub/deep/d.go":         "package deep // KEY",
	"sub/deep/more/m.go":    "package more // KEY",
	".github/ci.yml":        "KEY: ci",
	".hidden.env":           "KEY=hidden",
	".git/info/exclude":     "excluded.txt\n",
	".git/config":           "KEY=git",
	"excluded.txt":          "KEY excluded",
	"global.bak":            "KEY global",
	"../outside/secret.env": "KEY outside",
	"out-link":              "->../outside",
}

var visible = []string{".github/ci.yml", ".gitignore", ".hidden.env", "cmd/main.go", "ok.env", "sub/.gitignore", "sub/a.go"}

// globalIgnore points git's global excludes file (which rg reads) at a
// file ignoring *.bak, away from the user's own configuration.
func globalIgnore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	p := filepath.Join(home, ".config", "git", "ignore")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("*.bak\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The listing honours nested .gitignore files, .git/info/exclude and the
// global excludes whether or not the workspace is a git repository, finds
// dotfiles, and leaves out .git.
func TestGlobHonoursIgnoreRules(t *testing.T) {
	globalIgnore(t)
	for _, git := range []bool{false, true} {
		f := newFixture(t, ignoreTree, Options{})
		if git {
			f.gitInit(t)
		}
		got, err := f.s.Glob(context.Background(), "**", "")
		if want := lines(f.abs(visible...)...); err != nil || got != want {
			t.Errorf("git=%v: Glob ** =\n%s\n%v; want\n%s", git, got, err, want)
		}
		// A subdirectory still sees the ignore files above it, anchored
		// ones included.
		got, err = f.s.Glob(context.Background(), "*.go", "cmd")
		if want := lines(f.abs("cmd/main.go")...); err != nil || got != want {
			t.Errorf("git=%v: Glob *.go in cmd = %q, %v; want %q", git, got, err, want)
		}
		got, err = f.s.Glob(context.Background(), "**/*.go", "sub")
		if want := lines(f.abs("sub/a.go")...); err != nil || got != want {
			t.Errorf("git=%v: Glob **/*.go in sub = %q, %v; want %q", git, got, err, want)
		}
	}
}

func TestGlobPatterns(t *testing.T) {
	f := newFixture(t, map[string]string{
		"a.go": "", "b.md": "", "c.txt": "", "x/a.go": "", "x/y/b.go": "", "x/y/z.md": "",
		"cmd/m/main.go": "", "cmd/m/main_test.go": "", ".github/workflows/ci.yml": "",
		"weird name:1.go": "",
	}, Options{})
	for _, tc := range []struct {
		pattern, path string
		want          []string
	}{
		{"*.go", "", []string{"a.go", "weird name:1.go"}},
		{"**/*.go", "", []string{"a.go", "cmd/m/main.go", "cmd/m/main_test.go", "weird name:1.go", "x/a.go", "x/y/b.go"}},
		{"*.{go,md}", "", []string{"a.go", "b.md", "weird name:1.go"}},
		{"**/*.{md,yml}", "", []string{".github/workflows/ci.yml", "b.md", "x/y/z.md"}},
		{"{a.go,x/y/*}", "", []string{"a.go", "x/y/b.go", "x/y/z.md"}},
		{"cmd/**/*_test.go", "", []string{"cmd/m/main_test.go"}},
		{"x/**", "", []string{"x/a.go", "x/y/b.go", "x/y/z.md"}},
		{"[ab].*", "", []string{"a.go", "b.md"}},
		{"?.txt", "", []string{"c.txt"}},
		{"weird name:*", "", []string{"weird name:1.go"}},
		{"./x/*.go", "", []string{"x/a.go"}},
		{filepath.Join(f.dir, "x", "*.go"), "", []string{"x/a.go"}},
		{"*.go", "x", []string{"x/a.go"}},
		{"**/*.go", "x", []string{"x/a.go", "x/y/b.go"}},
		{"y/*", f.dir + "/x", []string{"x/y/b.go", "x/y/z.md"}},
		{"*.go", "x/y/..", []string{"x/a.go"}},
	} {
		got, err := f.s.Glob(context.Background(), tc.pattern, tc.path)
		if want := lines(f.abs(tc.want...)...); err != nil || got != want {
			t.Errorf("Glob(%q, %q) =\n%s\n%v; want\n%s", tc.pattern, tc.path, got, err, want)
		}
	}
}

func TestGlobNewestFirst(t *testing.T) {
	f := newFixture(t, map[string]string{"old.go": "", "mid.go": "", "new.go": "", "tie-b.go": "", "tie-a.go": ""}, Options{})
	for name, age := range map[string]time.Duration{"old.go": 3 * time.Hour, "mid.go": 2 * time.Hour, "new.go": 0, "tie-a.go": time.Hour, "tie-b.go": time.Hour} {
		mt := epoch.Add(-age)
		if err := os.Chtimes(filepath.Join(f.dir, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.s.Glob(context.Background(), "*.go", "")
	if want := lines(f.abs("new.go", "tie-a.go", "tie-b.go", "mid.go", "old.go")...); err != nil || got != want {
		t.Errorf("Glob =\n%s\n%v; want\n%s", got, err, want)
	}
}

func TestGlobLimit(t *testing.T) {
	f := newFixture(t, map[string]string{"1.go": "", "2.go": "", "3.go": "", "4.go": "", "5.go": ""}, Options{GlobLimit: 3})
	got, err := f.s.Glob(context.Background(), "*.go", "")
	want := lines(append(f.abs("1.go", "2.go", "3.go"), "(showing 3 of 5 matches; narrow the pattern)")...)
	if err != nil || got != want {
		t.Errorf("Glob =\n%s\n%v; want\n%s", got, err, want)
	}
}

func TestGlobNoMatchAndBadPatterns(t *testing.T) {
	f := newFixture(t, map[string]string{"a.go": "", "secret.env": "", ".gitignore": "secret.env\n"}, Options{})
	for _, p := range []string{"*.rs", "secret.env", "**/secret.*"} {
		if got, err := f.s.Glob(context.Background(), p, ""); err != nil || got != "No files found" {
			t.Errorf("Glob(%q) = %q, %v", p, got, err)
		}
	}
	for pattern, want := range map[string]string{
		"a/{b":         `invalid glob pattern "a/{b"`,
		"[":            `invalid glob pattern "["`,
		"":             "empty pattern",
		"./":           `invalid glob pattern "./"`,
		"/etc/*.conf":  "is absolute and not under the search directory",
		f.base + "/*":  "is absolute and not under the search directory",
		f.dir + "-x/*": "is absolute and not under the search directory",
	} {
		_, err := f.s.Glob(context.Background(), pattern, "")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "glob: ") {
			t.Errorf("Glob(%q): %v; want %q", pattern, err, want)
		}
	}
}

// newest agrees with sorting everything, for every k.
func TestNewestMatchesFullSort(t *testing.T) {
	var hits []globHit
	for i := range 200 {
		hits = append(hits, globHit{path: string(rune('a'+i%26)) + itoa(i), mod: int64(i * 7919 % 13)})
	}
	all := slices.Clone(hits)
	slices.SortFunc(all, newer)
	for _, k := range []int{1, 2, 3, 7, 50, 199, 200, 500} {
		got := newest(slices.Clone(hits), k)
		if want := all[:min(k, len(all))]; !slices.Equal(got, want) {
			t.Errorf("k=%d: %v\nwant %v", k, got, want)
		}
	}
}
