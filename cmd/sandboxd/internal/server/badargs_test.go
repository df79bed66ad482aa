package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wholeArgs are the number arguments that take whole numbers; every other
// number may have a fraction.
var wholeArgs = map[string]bool{"offset": true, "limit": true, "-A": true, "-B": true, "-C": true, "head_limit": true, "line": true, "since_event_id": true}

// TestBadArgumentsEveryTool calls every tool, through the official SDK's
// client, with an argument it does not take, without each required
// argument, and with each argument of the wrong JSON type: each call is
// a tool error that names the tool and the argument, and runs nothing.
func TestBadArgumentsEveryTool(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{Workspaces: []Workspace{{Name: "a", Dir: t.TempDir()}, {Name: "b", Dir: t.TempDir()}}})
	cs := d.connect(t, streamable)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 29 {
		t.Fatalf("%d tools, want 29", len(res.Tools))
	}
	type property struct {
		Type  string `json:"type"`
		Items struct {
			Type string `json:"type"`
		} `json:"items"`
	}
	for _, tool := range res.Tools {
		var schema struct {
			Properties map[string]property `json:"properties"`
			Required   []string            `json:"required"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s's schema: %v", tool.Name, err)
		}
		name := tool.Name
		// valid holds every required argument; each is a string.
		valid := map[string]any{}
		for _, r := range schema.Required {
			if schema.Properties[r].Type != "string" {
				t.Fatalf("%s: required %s is a %s; the test fills in only strings", name, r, schema.Properties[r].Type)
			}
			valid[r] = "x"
		}
		with := func(k string, v any) map[string]any {
			args := maps.Clone(valid)
			args[k] = v
			return args
		}
		takes := "takes no arguments"
		if len(schema.Properties) > 0 {
			takes = "takes " + strings.Join(slices.Sorted(maps.Keys(schema.Properties)), ", ")
		}
		cases := []struct {
			args map[string]any
			want string
		}{
			{with("bogus_arg", true), fmt.Sprintf(`%s: unknown argument "bogus_arg" (%s %s)`, name, name, takes)},
		}
		for _, r := range schema.Required {
			args := maps.Clone(valid)
			delete(args, r)
			cases = append(cases, struct {
				args map[string]any
				want string
			}{args, fmt.Sprintf(`%s: missing required argument %q (a string)`, name, r)})
		}
		for _, p := range slices.Sorted(maps.Keys(schema.Properties)) {
			bad := func(v any, want string) {
				cases = append(cases, struct {
					args map[string]any
					want string
				}{with(p, v), fmt.Sprintf(`%s: argument %q: %s`, name, p, want)})
			}
			switch prop := schema.Properties[p]; {
			case prop.Type == "string":
				bad(42, "want a string, got a number")
				bad([]string{"x"}, "want a string, got an array")
			case prop.Type == "boolean":
				bad("true", "want true or false, got a string")
			case prop.Type == "number" && wholeArgs[p]:
				bad("7", "want a whole number, got a string")
				bad(1.5, "want a whole number from -9007199254740992 to 9007199254740992, got 1.5")
			case prop.Type == "number":
				bad("7", "want a number, got a string")
				bad(true, "want a number, got a boolean")
			case prop.Type == "array" && prop.Items.Type == "string":
				bad(map[string]any{"a": "b"}, "want an array of strings, got an object")
				bad([]any{"ok", 1}, "want an array of strings, got a number at index 1")
			default:
				t.Errorf("%s: argument %s of type %+v: the test has no wrong value for it", name, p, prop)
			}
		}
		for _, c := range cases {
			if got := fails(t, cs, name, c.args); got != c.want {
				t.Errorf("%s(%v):\n got %s\nwant %s", name, c.args, got, c.want)
			}
		}
	}
}

// TestBadArgumentsTogether: one call's bad arguments are reported
// together, and arguments that are not an object are refused.
func TestBadArgumentsTogether(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	want := `Read: unknown argument "fle_path" (Read takes file_path, limit, offset); unknown argument "lmit" (Read takes file_path, limit, offset); ` +
		`missing required argument "file_path" (a string); argument "offset": want a whole number, got a string`
	if got := fails(t, cs, "Read", map[string]any{"fle_path": "f", "lmit": 3, "offset": "1"}); got != want {
		t.Errorf("several bad arguments:\n got %s\nwant %s", got, want)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "Read", Arguments: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !r.IsError || !ok || tc.Text != "Read: the arguments must be an object, not an array" {
		t.Errorf("arguments that are an array: %+v", r.Content[0])
	}
	// The one workspace need not be offered to be named.
	if got, want := fails(t, cs, "Read", map[string]any{"file_path": "f", "workspace": "w"}), `unknown workspace "w": this server has one, unnamed; leave workspace out`; got != want {
		t.Errorf("naming a workspace not offered: %s, want %s", got, want)
	}
}
