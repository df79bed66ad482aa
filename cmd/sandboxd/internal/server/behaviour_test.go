package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests check each tool's documented behaviour end to end, over MCP;
// the tools' own packages test the edges in more depth.

func TestReadBehaviour(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, sse)
	write := func(name, content string) string {
		p := filepath.Join(d.dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var lines strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&lines, "l%d\n", i)
	}
	long := write("long.txt", lines.String())
	got := ok(t, cs, "Read", map[string]any{"file_path": long})
	if !strings.HasPrefix(got, "     1\tl1\n") || !strings.Contains(got, "  2000\tl2000\n") || strings.Contains(got, "\tl2001") ||
		!strings.Contains(got, "Showed lines 1-2000 of 2500") || !strings.Contains(got, "offset=2001") {
		t.Errorf("default limit: %.80q ... %q", got, got[len(got)-120:])
	}
	if got := ok(t, cs, "Read", map[string]any{"file_path": long, "offset": 2499, "limit": 5}); got != "  2499\tl2499\n  2500\tl2500" {
		t.Errorf("offset/limit: %q", got)
	}
	wide := write("wide.txt", strings.Repeat("x", 5000)+"\n")
	if got := ok(t, cs, "Read", map[string]any{"file_path": wide}); len(got) > 2200 || !strings.Contains(got, "truncated") {
		t.Errorf("a 5000-character line came back as %d bytes: %.60q", len(got), got)
	}
	empty := write("empty.txt", "")
	if got := ok(t, cs, "Read", map[string]any{"file_path": empty}); got != "The file "+empty+" exists but is empty." {
		t.Errorf("empty: %q", got)
	}
	write("bin.dat", "\x7fELF\x00\x01\x02")
	if msg := fails(t, cs, "Read", map[string]any{"file_path": "bin.dat"}); !strings.Contains(msg, "binary file (7 bytes)") {
		t.Errorf("binary: %q", msg)
	}
	if msg := fails(t, cs, "Read", map[string]any{"file_path": "."}); !strings.Contains(msg, "directory") {
		t.Errorf("directory: %q", msg)
	}
	if msg := fails(t, cs, "Read", map[string]any{"file_path": "nope.txt"}); !strings.Contains(msg, "nope.txt") || !strings.Contains(msg, "not exist") {
		t.Errorf("missing: %q", msg)
	}
}

func TestWriteAndEditBehaviour(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	script := filepath.Join(d.dir, "run.sh")
	os.WriteFile(script, []byte("echo a\necho a\n"), 0o755)
	ok(t, cs, "Read", map[string]any{"file_path": script})
	if msg := fails(t, cs, "Edit", map[string]any{"file_path": script, "old_string": "echo a", "new_string": "echo b"}); !strings.Contains(msg, "2") {
		t.Errorf("ambiguous edit: %q", msg)
	}
	if msg := fails(t, cs, "Edit", map[string]any{"file_path": script, "old_string": "echo z", "new_string": "echo b"}); !strings.Contains(msg, "not found") {
		t.Errorf("edit of a missing string: %q", msg)
	}
	if got := ok(t, cs, "Edit", map[string]any{"file_path": script, "old_string": "echo a", "new_string": "echo b", "replace_all": true}); !strings.Contains(got, "2 occurrences") {
		t.Errorf("replace_all: %q", got)
	}
	ok(t, cs, "Write", map[string]any{"file_path": script, "content": "echo c\n"})
	fi, _ := os.Stat(script)
	if b, _ := os.ReadFile(script); string(b) != "echo c\n" || fi.Mode().Perm() != 0o755 {
		t.Errorf("after Write: %q, mode %v", b, fi.Mode().Perm())
	}
	ok(t, cs, "Write", map[string]any{"file_path": "a/b/c/new.txt", "content": "new\n"})
	if b, _ := os.ReadFile(filepath.Join(d.dir, "a/b/c/new.txt")); string(b) != "new\n" {
		t.Errorf("Write with new parents: %q", b)
	}
	if entries, _ := os.ReadDir(d.dir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.Contains(e.Name(), ".tmp") }) {
		t.Errorf("a temporary file was left: %v", entries)
	}
}

func TestGlobAndGrepBehaviour(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	files := map[string]string{
		".gitignore":             "secrets.env\nbuild/\n",
		"secrets.env":            "API=needle\n",
		"build/out.go":           "package needle\n",
		"pkg/.gitignore":         "gen.go\n",
		"pkg/gen.go":             "package needle\n",
		"pkg/a.go":               "package pkg // Needle\n",
		"pkg/b.go":               "package pkg\n\nvar x = 1 // needle\nvar y = 2\n",
		"web/app.ts":             "const needle = 1\n",
		"web/app.tsx":            "const needle = 2\n",
		".github/workflows/ci.y": "needle\n",
		"excluded.go":            "package needle\n",
	}
	base := time.Now().Add(-time.Hour)
	i := 0
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		p := filepath.Join(d.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(files[name]), 0o644)
		os.Chtimes(p, base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute))
		i++
	}
	if out, err := exec.Command("git", "-C", d.dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(d.dir, ".git/info/exclude"), []byte("excluded.go\n"), 0o644)
	abs := func(names ...string) string {
		for i, n := range names {
			names[i] = filepath.Join(d.dir, n)
		}
		return strings.Join(names, "\n")
	}

	// Newest first: pkg/b.go was written after pkg/a.go.
	if got, want := ok(t, cs, "Glob", map[string]any{"pattern": "**/*.go"}), abs("pkg/b.go", "pkg/a.go"); got != want {
		t.Errorf("Glob **/*.go:\n%s\nwant\n%s", got, want)
	}
	if got, want := ok(t, cs, "Glob", map[string]any{"pattern": "*.{ts,tsx}", "path": "web"}), abs("web/app.tsx", "web/app.ts"); got != want {
		t.Errorf("Glob braces:\n%s\nwant\n%s", got, want)
	}
	if got := ok(t, cs, "Glob", map[string]any{"pattern": ".github/**"}); got != abs(".github/workflows/ci.y") {
		t.Errorf("Glob hidden: %q", got)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "needle"}); got != abs(".github/workflows/ci.y", "pkg/b.go", "web/app.ts", "web/app.tsx") &&
		!sameLines(got, abs(".github/workflows/ci.y", "pkg/b.go", "web/app.ts", "web/app.tsx")) {
		t.Errorf("Grep files_with_matches: %q", got)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "-i": true, "type": "go", "output_mode": "count"}); !sameLines(got, abs("pkg/a.go")+":1\n"+abs("pkg/b.go")+":1") {
		t.Errorf("Grep count -i type: %q", got)
	}
	if got, want := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "path": "pkg/b.go", "output_mode": "content", "-C": 1}), abs("pkg/b.go")+"-2-\n"+abs("pkg/b.go")+":3:var x = 1 // needle\n"+abs("pkg/b.go")+"-4-var y = 2"; got != want {
		t.Errorf("Grep -C 1:\n%q\nwant\n%q", got, want)
	}
	for _, glob := range []string{"*.env", "secrets.env", "**/*.go", "build/*", "pkg/gen.go", "*.{env,go}"} {
		got := call(t, cs, "Grep", map[string]any{"pattern": "needle", "glob": glob, "output_mode": "content"})
		for _, hidden := range []string{"secrets.env", "build/out.go", "gen.go", "excluded.go"} {
			if strings.Contains(got.Text, hidden) {
				t.Errorf("Grep glob %q un-ignored %s: %q", glob, hidden, got.Text)
			}
		}
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "const", "output_mode": "content", "head_limit": 1}); strings.Count(got, "const needle") != 1 {
		t.Errorf("head_limit 1: %q", got)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "x = 1.*\\n.*y", "multiline": true}); got != abs("pkg/b.go") {
		t.Errorf("multiline: %q", got)
	}
	if msg := fails(t, cs, "Grep", map[string]any{"pattern": "("}); !strings.Contains(msg, "regex") {
		t.Errorf("bad regex: %q", msg)
	}
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "no such text anywhere"}); got != "No matches found" {
		t.Errorf("no match: %q", got)
	}
}

func sameLines(a, b string) bool {
	x, y := strings.Split(strings.TrimSpace(a), "\n"), strings.Split(strings.TrimSpace(b), "\n")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
