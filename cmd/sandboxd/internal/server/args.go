package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// A tool's arguments are a struct of its own, one field an argument,
// named by the field's json tag and tagged mcp:"required" when a call
// must give it. A field is a string, bool, int, float64 or []string; a
// pointer to a string, bool or int when leaving the argument out means
// something other than its zero value (a default, or "not given").
// Embedded structs add their fields. JSON null is the argument left out.
//
// The struct is checked against the schema the tool declares when the
// tool is registered (argSpec.check), so the two cannot drift apart; a
// call's arguments are decoded into it by argSpec.decode, the one place
// a bad argument becomes an error, which replyHandler hands the client.

// toolFunc is a tool's body, given its arguments; what it returns is
// scrubbed by the caller.
type toolFunc[A any] func(ctx context.Context, args A) (string, error)

// spaceFunc is the body of a tool that works in one workspace, already
// picked.
type spaceFunc[A any] func(ctx context.Context, sp *space, args A) (string, error)

// replyFunc is the body of a tool that may return an image.
type replyFunc[A any] func(ctx context.Context, args A) (reply, error)

// inWorkspace is the workspace argument, which every tool that works in
// a workspace takes. The schema offers it only when there is a choice
// (workspaceParam), but a call may name the one workspace all the same.
type inWorkspace struct {
	Workspace string `json:"workspace"`
}

func (w inWorkspace) workspaceName() string { return w.Workspace }

// workspaced is the arguments of a tool that works in a workspace.
type workspaced interface{ workspaceName() string }

// inSpace picks the workspace the call names (or the only one) for fn.
func inSpace[A workspaced](s *Server, fn spaceFunc[A]) toolFunc[A] {
	return func(ctx context.Context, args A) (string, error) {
		sp, err := s.space(args.workspaceName())
		if err != nil {
			return "", err
		}
		return fn(ctx, sp, args)
	}
}

// addTool registers tool, whose body fn gets each call's arguments
// decoded into an A.
func addTool[A any](s *Server, m *mcpserver.MCPServer, tool mcp.Tool, fn toolFunc[A]) {
	addReplyTool(s, m, tool, func(ctx context.Context, args A) (reply, error) {
		text, err := fn(ctx, args)
		return reply{text: text}, err
	})
}

// addReplyTool is addTool for a tool that may return an image. An A
// that does not match the arguments tool declares is a bug, which
// panics here, as the server starts.
func addReplyTool[A any](s *Server, m *mcpserver.MCPServer, tool mcp.Tool, fn replyFunc[A]) {
	spec, err := newArgSpec(tool, reflect.TypeFor[A]())
	if err != nil {
		panic(err)
	}
	m.AddTool(tool, s.replyHandler(tool.Name, func(ctx context.Context, req mcp.CallToolRequest) (reply, error) {
		var args A
		if err := spec.decode(req, reflect.ValueOf(&args).Elem()); err != nil {
			return reply{}, err
		}
		return fn(ctx, args)
	}))
}

// argKind is the JSON an argument takes, as the schema names it.
type argKind string

const (
	kindString  argKind = "string"
	kindNumber  argKind = "number"
	kindBoolean argKind = "boolean"
	kindArray   argKind = "array of strings"
)

// argField is one argument: a field of the arguments struct.
type argField struct {
	name     string
	index    []int // the field, through embedded structs
	kind     argKind
	whole    bool // a number without a fraction (an int)
	required bool
}

// want says what the argument takes, for an error.
func (f argField) want() string {
	switch {
	case f.whole:
		return "a whole number"
	case f.kind == kindArray:
		return "an array of strings"
	case f.kind == kindBoolean:
		return "true or false"
	}
	return "a " + string(f.kind)
}

// argSpec is how a tool's arguments decode into its struct.
type argSpec struct {
	tool   string
	fields []argField
	takes  string // the arguments the schema declares, for an unknown one's error
}

// newArgSpec reads the arguments struct t of tool, and checks it
// against the schema tool declares.
func newArgSpec(tool mcp.Tool, t reflect.Type) (*argSpec, error) {
	spec := &argSpec{tool: tool.Name}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool %s: arguments %s: not a struct", tool.Name, t)
	}
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			continue // its fields follow
		}
		f, err := fieldOf(sf)
		if err != nil {
			return nil, fmt.Errorf("tool %s: arguments %s: field %s: %w", tool.Name, t, sf.Name, err)
		}
		if spec.field(f.name) != nil {
			return nil, fmt.Errorf("tool %s: arguments %s: two fields named %q", tool.Name, t, f.name)
		}
		spec.fields = append(spec.fields, f)
	}
	if err := spec.check(tool); err != nil {
		return nil, fmt.Errorf("tool %s: arguments %s do not match its schema: %w", tool.Name, t, err)
	}
	names := make([]string, 0, len(tool.InputSchema.Properties))
	for name := range tool.InputSchema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	spec.takes = "takes no arguments"
	if len(names) > 0 {
		spec.takes = "takes " + strings.Join(names, ", ")
	}
	return spec, nil
}

func fieldOf(sf reflect.StructField) (argField, error) {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "" || name == "-" || !sf.IsExported() {
		return argField{}, errors.New("want an exported field with a json name")
	}
	f := argField{name: name, index: sf.Index}
	switch req := sf.Tag.Get("mcp"); req {
	case "required":
		f.required = true
	case "":
	default:
		return argField{}, fmt.Errorf("mcp tag %q: want required or none", req)
	}
	t := sf.Type
	optional := t.Kind() == reflect.Pointer
	if optional {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String:
		f.kind = kindString
	case t.Kind() == reflect.Bool:
		f.kind = kindBoolean
	case t.Kind() == reflect.Int:
		f.kind, f.whole = kindNumber, true
	case t.Kind() == reflect.Float64 && !optional:
		f.kind = kindNumber
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String && !optional:
		f.kind = kindArray
	default:
		return argField{}, fmt.Errorf("type %s: want a string, bool, int, float64 or []string, or a pointer to a string, bool or int", sf.Type)
	}
	return f, nil
}

func (s *argSpec) field(name string) *argField {
	for i := range s.fields {
		if s.fields[i].name == name {
			return &s.fields[i]
		}
	}
	return nil
}

// check says how the fields differ from the arguments tool declares:
// their names, what JSON each takes, and which are required. Only the
// workspace may be a field the schema leaves out: a server with one
// workspace does not offer it.
func (s *argSpec) check(tool mcp.Tool) error {
	schema := tool.InputSchema
	if len(tool.RawInputSchema) > 0 {
		return errors.New("a raw input schema cannot be checked")
	}
	var problems []string
	for name, p := range schema.Properties {
		f := s.field(name)
		if f == nil {
			problems = append(problems, fmt.Sprintf("%q is declared but no field takes it", name))
			continue
		}
		if got := schemaKind(p); got != f.kind {
			problems = append(problems, fmt.Sprintf("%q is declared as %s but its field takes %s", name, got, f.kind))
		}
	}
	for _, f := range s.fields {
		if _, ok := schema.Properties[f.name]; !ok && f.name != "workspace" {
			problems = append(problems, fmt.Sprintf("field %q is not declared", f.name))
		}
		if declared := slices.Contains(schema.Required, f.name); declared != f.required {
			problems = append(problems, fmt.Sprintf("%q is required in the schema: %t, in the field: %t", f.name, declared, f.required))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return errors.New(strings.Join(problems, "; "))
}

// schemaKind is what JSON a declared property takes.
func schemaKind(p any) argKind {
	prop, _ := p.(map[string]any)
	t, _ := prop["type"].(string)
	if t != "array" {
		return argKind(t)
	}
	items, _ := prop["items"].(map[string]any)
	if items["type"] == "string" {
		return kindArray
	}
	return argKind(fmt.Sprintf("array of %v", items["type"]))
}

// decode sets dst, a zero arguments struct, from the call's arguments,
// or says everything wrong with them: arguments the tool does not take,
// required ones left out, and values of the wrong JSON type. The error
// names the tool and each argument.
func (s *argSpec) decode(req mcp.CallToolRequest, dst reflect.Value) error {
	var all json.RawMessage
	if err := req.BindArguments(&all); err != nil {
		return fmt.Errorf("%s: arguments: %w", s.tool, err)
	}
	var raw map[string]json.RawMessage
	switch k := jsonKind(all); k {
	case "an object":
		if err := json.Unmarshal(all, &raw); err != nil {
			return fmt.Errorf("%s: arguments: %w", s.tool, err)
		}
	case "nothing", "null":
	default:
		return fmt.Errorf("%s: the arguments must be an object, not %s", s.tool, k)
	}
	var problems []string
	unknown := make([]string, 0, len(raw))
	for name := range raw {
		if s.field(name) == nil {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		problems = append(problems, fmt.Sprintf("unknown argument %q (%s %s)", name, s.tool, s.takes))
	}
	for _, f := range s.fields {
		v, given := raw[f.name]
		if !given || jsonKind(v) == "null" {
			if f.required {
				problems = append(problems, fmt.Sprintf("missing required argument %q (%s)", f.name, f.want()))
			}
			continue
		}
		if err := f.set(dst.FieldByIndex(f.index), v); err != nil {
			problems = append(problems, fmt.Sprintf("argument %q: %v", f.name, err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", s.tool, strings.Join(problems, "; "))
	}
	return nil
}

// maxWhole bounds a whole-number argument: past it a JSON number (a
// float64 to most clients) no longer holds every integer.
const maxWhole = 1 << 53

// set decodes the JSON value raw, not null, into the field v.
func (f argField) set(v reflect.Value, raw json.RawMessage) error {
	got := jsonKind(raw)
	mismatch := fmt.Errorf("want %s, got %s", f.want(), got)
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	switch f.kind {
	case kindString:
		if got != "a string" {
			return mismatch
		}
		return json.Unmarshal(raw, v.Addr().Interface())
	case kindBoolean:
		if got != "a boolean" {
			return mismatch
		}
		return json.Unmarshal(raw, v.Addr().Interface())
	case kindNumber:
		if got != "a number" {
			return mismatch
		}
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return fmt.Errorf("want %s: %w", f.want(), err)
		}
		if !f.whole {
			v.SetFloat(n)
			return nil
		}
		if n != math.Trunc(n) || math.Abs(n) > maxWhole || v.OverflowInt(int64(n)) {
			return fmt.Errorf("want a whole number from -%d to %d, got %s", int64(maxWhole), int64(maxWhole), raw)
		}
		v.SetInt(int64(n))
		return nil
	}
	if got != "an array" {
		return mismatch
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	out := make([]string, len(items))
	for i, item := range items {
		if k := jsonKind(item); k != "a string" {
			return fmt.Errorf("want an array of strings, got %s at index %d", k, i)
		}
		if err := json.Unmarshal(item, &out[i]); err != nil {
			return err
		}
	}
	v.Set(reflect.ValueOf(out))
	return nil
}

// jsonKind names the type of a JSON value.
func jsonKind(value json.RawMessage) string {
	b := bytes.TrimSpace(value)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
