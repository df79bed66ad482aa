package server

import (
	"reflect"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// decodeArgs decodes args as srv's tool decodes a call's.
func decodeArgs[A any](t testing.TB, srv *Server, tool string, args map[string]any) A {
	t.Helper()
	st := srv.MCP().GetTool(tool)
	if st == nil {
		t.Fatalf("no tool %s", tool)
	}
	spec, err := newArgSpec(st.Tool, reflect.TypeFor[A]())
	if err != nil {
		t.Fatal(err)
	}
	var a A
	req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: tool, Arguments: args}}
	if err := spec.decode(req, reflect.ValueOf(&a).Elem()); err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return a
}

// TestArgsDecode: what a valid call's arguments decode to, defaults and
// the arguments left out included.
func TestArgsDecode(t *testing.T) {
	t.Parallel()
	srv := startDaemon(t, Config{}).srv
	if got, want := decodeArgs[readArgs](t, srv, "Read", map[string]any{"file_path": "f", "offset": 10.0, "limit": 1e2}), (readArgs{FilePath: "f", Offset: 10, Limit: 100}); got != want {
		t.Errorf("Read with whole numbers written as floats: %+v, want %+v", got, want)
	}
	if got, want := decodeArgs[readArgs](t, srv, "Read", map[string]any{"file_path": "f", "limit": nil, "workspace": ""}), (readArgs{FilePath: "f"}); got != want {
		t.Errorf("Read with a null limit: %+v, want %+v", got, want)
	}
	if g := decodeArgs[grepArgs](t, srv, "Grep", map[string]any{"pattern": "p"}).request(); !g.LineNumbers || g.IgnoreCase {
		t.Errorf("Grep without -n or -i: %+v, want line numbers and case", g)
	}
	if g := decodeArgs[grepArgs](t, srv, "Grep", map[string]any{"pattern": "p", "-n": false, "-i": true, "-C": 2}).request(); g.LineNumbers || !g.IgnoreCase || g.Context != 2 {
		t.Errorf("Grep with -n false, -i and -C 2: %+v", g)
	}
	if a := decodeArgs[testsCoveringArgs](t, srv, "tests_covering", map[string]any{"file_path": "a.go"}); a.Line != nil {
		t.Errorf("tests_covering without line: line %d, want none", *a.Line)
	}
	if a := decodeArgs[testsCoveringArgs](t, srv, "tests_covering", map[string]any{"file_path": "a.go", "line": 0}); a.Line == nil || *a.Line != 0 {
		t.Errorf("tests_covering with line 0: %v, want 0 given", a.Line)
	}
	if a := decodeArgs[changeSignatureArgs](t, srv, "change_function_signature", map[string]any{"file_path": "a.go", "function_name": "F", "new_signature": "func F()", "call_args": ""}); a.CallArgs == nil || *a.CallArgs != "" {
		t.Errorf("change_function_signature with empty call_args: %v, want \"\" given", a.CallArgs)
	}
	if a := decodeArgs[bashArgs](t, srv, "Bash", map[string]any{"command": "true", "timeout": 1.5, "secrets": []string{}}); a.Timeout != 1.5 || a.Secrets == nil || len(a.Secrets) != 0 {
		t.Errorf("Bash with timeout 1.5 and no secrets named: %+v", a)
	}
	if a := decodeArgs[runTestsArgs](t, srv, "run_tests", map[string]any{"path": "p", "timeout": 5, "secrets": []string{"A", "B"}, "run": "TestX"}); !reflect.DeepEqual(a, runTestsArgs{checkArgs: checkArgs{Path: "p", runArgs: runArgs{Timeout: 5, withSecrets: withSecrets{[]string{"A", "B"}}}}, Run: "TestX"}) {
		t.Errorf("run_tests: %+v", a)
	}
}

// TestArgSpecMustMatchSchema: an arguments struct that differs from the
// schema its tool declares is refused, saying how.
func TestArgSpecMustMatchSchema(t *testing.T) {
	t.Parallel()
	tool := mcpgo.NewTool("t",
		mcpgo.WithString("name", mcpgo.Required()),
		mcpgo.WithNumber("count"),
		mcpgo.WithArray("tags", mcpgo.WithStringItems()),
	)
	type good struct {
		inWorkspace
		Name  string   `json:"name" mcp:"required"`
		Count *int     `json:"count"`
		Tags  []string `json:"tags"`
	}
	if _, err := newArgSpec(tool, reflect.TypeFor[good]()); err != nil {
		t.Fatalf("matching struct: %v", err)
	}
	type drifted struct {
		Name  string `json:"name"`
		Count bool   `json:"count"`
		Extra string `json:"extra" mcp:"required"`
	}
	_, err := newArgSpec(tool, reflect.TypeFor[drifted]())
	want := `tool t: arguments server.drifted do not match its schema: "count" is declared as number but its field takes boolean; ` +
		`"extra" is required in the schema: false, in the field: true; "name" is required in the schema: true, in the field: false; ` +
		`"tags" is declared but no field takes it; field "extra" is not declared`
	if err == nil || err.Error() != want {
		t.Errorf("drifted struct: %v\nwant %s", err, want)
	}
	type badType struct {
		Name  string            `json:"name" mcp:"required"`
		Count map[string]string `json:"count"`
	}
	if _, err := newArgSpec(tool, reflect.TypeFor[badType]()); err == nil || !strings.Contains(err.Error(), "field Count: type map[string]string") {
		t.Errorf("unsupported field type: %v", err)
	}
	type untagged struct {
		Name string
	}
	if _, err := newArgSpec(tool, reflect.TypeFor[untagged]()); err == nil || !strings.Contains(err.Error(), "field Name: want an exported field with a json name") {
		t.Errorf("untagged field: %v", err)
	}
}
