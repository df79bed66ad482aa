package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsOverEachTransport runs the file, search and shell tools over
// Streamable HTTP and over SSE.
func TestToolsOverEachTransport(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{streamable, sse} {
		t.Run(string(tr), func(t *testing.T) {
			d := startDaemon(t, Config{})
			cs := d.connect(t, tr)
			file := filepath.Join(d.dir, "src", "hello.go")
			if got := ok(t, cs, "Write", map[string]any{"file_path": "src/hello.go", "content": "package hello\n\nfunc Hello() string { return \"hi\" }\n"}); !strings.Contains(got, file) {
				t.Errorf("Write: %q does not name %s", got, file)
			}
			if got, want := ok(t, cs, "Read", map[string]any{"file_path": file}), "     1\tpackage hello\n     2\t\n     3\tfunc Hello() string { return \"hi\" }"; got != want {
				t.Errorf("Read:\n%q\nwant\n%q", got, want)
			}
			if got := ok(t, cs, "Edit", map[string]any{"file_path": file, "old_string": `"hi"`, "new_string": `"hello"`}); !strings.Contains(got, "1") {
				t.Errorf("Edit: %q", got)
			}
			if b, _ := os.ReadFile(file); !strings.Contains(string(b), `return "hello"`) {
				t.Errorf("after Edit the file holds %q", b)
			}
			if got := ok(t, cs, "Glob", map[string]any{"pattern": "**/*.go"}); strings.TrimSpace(got) != file {
				t.Errorf("Glob: %q, want %s", got, file)
			}
			if got := ok(t, cs, "Grep", map[string]any{"pattern": "func Hello", "output_mode": "content"}); got != file+":3:func Hello() string { return \"hello\" }\n" && strings.TrimSpace(got) != file+":3:func Hello() string { return \"hello\" }" {
				t.Errorf("Grep: %q", got)
			}
			if got := ok(t, cs, "Bash", map[string]any{"command": "pwd; cat src/hello.go | wc -l"}); !strings.Contains(got, d.dir+"\n3") {
				t.Errorf("Bash: %q", got)
			}
		})
	}
}

// TestReadTrackingIsPerSession: one session's Read does not let another
// session overwrite the file.
func TestReadTrackingIsPerSession(t *testing.T) {
	d := startDaemon(t, Config{})
	if err := os.WriteFile(filepath.Join(d.dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, other := d.connect(t, streamable), d.connect(t, streamable)
	ok(t, reader, "Read", map[string]any{"file_path": "a.txt"})
	if msg := fails(t, other, "Write", map[string]any{"file_path": "a.txt", "content": "two\n"}); !strings.Contains(msg, "Read it first") {
		t.Errorf("unread Write: %q", msg)
	}
	if msg := fails(t, other, "Edit", map[string]any{"file_path": "a.txt", "old_string": "one", "new_string": "two"}); !strings.Contains(msg, "Read it first") {
		t.Errorf("unread Edit: %q", msg)
	}
	ok(t, reader, "Write", map[string]any{"file_path": "a.txt", "content": "two\n"})
	if b, _ := os.ReadFile(filepath.Join(d.dir, "a.txt")); string(b) != "two\n" {
		t.Fatalf("file holds %q", b)
	}
}

// TestStaleFilesAreNotOverwritten: a file changed on disk after the
// session read it is refused by Write and Edit until read again.
func TestStaleFilesAreNotOverwritten(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	path := filepath.Join(d.dir, "s.txt")
	os.WriteFile(path, []byte("v1\n"), 0o644)
	ok(t, cs, "Read", map[string]any{"file_path": path})
	os.WriteFile(path, []byte("v2 changed elsewhere\n"), 0o644)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"Write", map[string]any{"file_path": path, "content": "mine\n"}},
		{"Edit", map[string]any{"file_path": path, "old_string": "v2", "new_string": "v3"}},
	} {
		if msg := fails(t, cs, c.tool, c.args); !strings.Contains(msg, "changed since") {
			t.Errorf("%s of a stale file: %q", c.tool, msg)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "v2 changed elsewhere\n" {
		t.Fatalf("the stale write landed: %q", b)
	}
	ok(t, cs, "Read", map[string]any{"file_path": path})
	ok(t, cs, "Edit", map[string]any{"file_path": path, "old_string": "v2", "new_string": "v3"})
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestReadonlyOffersOnlyNonMutatingTools(t *testing.T) {
	d := startDaemon(t, Config{ReadOnly: true})
	if got, want := toolNames(t, d.connect(t, streamable)), []string{"Glob", "Grep", "Read", "find_definition", "find_references", "render_diagram", "search_code"}; !slices.Equal(got, want) {
		t.Fatalf("read-only tools %v, want %v", got, want)
	}
	d = startDaemon(t, Config{})
	if got, want := toolNames(t, d.connect(t, streamable)), []string{"Bash", "BashOutput", "Edit", "Glob", "Grep", "KillShell", "Read", "Write", "change_function_signature", "edit_function_body", "find_definition", "find_references", "insert_after_method", "last_test_failures", "rename_symbol", "render_diagram", "run_failing_tests", "run_lint", "run_tests", "run_typecheck", "search_code", "secrets_available", "snapshot_create", "snapshot_diff", "snapshot_list", "snapshot_restore", "tests_covering", "watch_process", "watch_process_events"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
}

func TestSeveralWorkspaces(t *testing.T) {
	app, lib := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(app, "f"), []byte("app\n"), 0o644)
	os.WriteFile(filepath.Join(lib, "f"), []byte("lib\n"), 0o644)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Name: "app", Dir: app}, {Name: "lib", Dir: lib}}})
	cs := d.connect(t, streamable)
	if msg := fails(t, cs, "Read", map[string]any{"file_path": "f"}); !strings.Contains(msg, "app, lib") {
		t.Errorf("no workspace named: %q", msg)
	}
	if got := ok(t, cs, "Read", map[string]any{"file_path": "f", "workspace": "lib"}); got != "     1\tlib" {
		t.Errorf("Read in lib: %q", got)
	}
	if msg := fails(t, cs, "Read", map[string]any{"file_path": filepath.Join(lib, "f"), "workspace": "app"}); !strings.Contains(msg, "outside the workspace") {
		t.Errorf("lib's file through app: %q", msg)
	}
	if got := ok(t, cs, "Bash", map[string]any{"command": "cat f", "workspace": "app"}); !strings.Contains(got, "app") {
		t.Errorf("Bash in app: %q", got)
	}
}
