package langfixture

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// CheckTools drives every tool of the fixture's language through cs, on
// a workspace holding the fixture's project, and fails t where a tool
// does not report what it must.
func (fx Fixture) CheckTools(t testing.TB, cs *mcp.ClientSession) {
	t.Helper()
	call := func(tool string, args map[string]any) string {
		t.Helper()
		start := time.Now()
		out := mcptest.CallText(t, cs, tool, args)
		t.Logf("%s %v (%v):\n%s", tool, args, time.Since(start).Round(time.Millisecond), out)
		return out
	}
	counts := fmt.Sprintf("%d passed, %d failed", fx.Passed, fx.Failed)
	if out := call("run_tests", map[string]any{}); !strings.Contains(out, counts) {
		t.Errorf("run_tests: want %q in:\n%s", counts, out)
	}
	if out := call("run_lint", map[string]any{}); !strings.Contains(out, fx.Lint) {
		t.Errorf("run_lint: want %q in:\n%s", fx.Lint, out)
	}
	if fx.Typecheck != "" {
		if out := call("run_typecheck", map[string]any{}); !strings.Contains(out, fx.Typecheck) {
			t.Errorf("run_typecheck: want %q in:\n%s", fx.Typecheck, out)
		}
	}
	if out := call("search_code", map[string]any{"query": fx.Symbol}); !strings.Contains(out, fx.DefFile) {
		t.Errorf("search_code %s: want %s in:\n%s", fx.Symbol, fx.DefFile, out)
	}
	if fx.LSP {
		def := fmt.Sprintf("%s:%d", fx.DefFile, fx.DefLine)
		if out := call("find_definition", map[string]any{"symbol": fx.Symbol, "file_path": fx.UseFile}); !strings.Contains(out, def) {
			t.Errorf("find_definition: want %s in:\n%s", def, out)
		}
		if out := call("find_references", map[string]any{"symbol": fx.Symbol, "file_path": fx.DefFile}); !strings.Contains(out, fx.UseFile) {
			t.Errorf("find_references: want %s in:\n%s", fx.UseFile, out)
		}
	}
	call("snapshot_create", map[string]any{"name": "clean"})
	call("Read", map[string]any{"file_path": fx.Break.File}) // Edit wants it read
	if out := call("Edit", fx.Break.Args()); !strings.Contains(out, fx.Diagnostic) {
		t.Errorf("Edit %s: want the diagnostic %q in:\n%s", fx.Break.File, fx.Diagnostic, out)
	}
	if out := call("run_typecheck", map[string]any{}); !strings.Contains(out, fx.Broken) {
		t.Errorf("run_typecheck after the edit: want %q in:\n%s", fx.Broken, out)
	}
	call("snapshot_restore", map[string]any{"name": "clean"})
	if out := call("Read", map[string]any{"file_path": fx.Break.File}); !strings.Contains(out, fx.Break.Old) {
		t.Errorf("after snapshot_restore, %s lacks %q:\n%s", fx.Break.File, fx.Break.Old, out)
	}
	if fx.LSP {
		renamed := fx.Symbol + "Renamed"
		call("rename_symbol", map[string]any{"symbol": fx.Symbol, "file_path": fx.DefFile, "new_name": renamed})
		for _, f := range []string{fx.DefFile, fx.UseFile} {
			if out := call("Read", map[string]any{"file_path": f}); !strings.Contains(out, renamed) {
				t.Errorf("after rename_symbol, %s lacks %s:\n%s", f, renamed, out)
			}
		}
		// Renamed everywhere: the tests build and count as before.
		if out := call("run_tests", map[string]any{}); !strings.Contains(out, counts) {
			t.Errorf("run_tests after rename_symbol: want %q in:\n%s", counts, out)
		}
	}
}

// WriteThrough writes the fixture's files through cs's Write tool, for a
// workspace the test cannot reach from the host (a pod's).
func (fx Fixture) WriteThrough(t testing.TB, cs *mcp.ClientSession) {
	t.Helper()
	all, err := fx.Files()
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range all {
		mcptest.CallText(t, cs, "Write", map[string]any{"file_path": rel, "content": string(content)})
	}
}
