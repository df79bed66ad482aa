package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// long is a string value long enough for the skeleton to cut.
var long = strings.Repeat("é<x>\\n\\u2028", 40)

// leanSeeds are documents that take the lean decoders, or just miss them.
var leanSeeds = []struct{ hook, phase, doc string }{
	{HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"` + long + `","meta":{"n":1.50,"l":[1e400]}}],"metadata":{"n":10000000000000000000001}}}`},
	{HookProvider, PhaseBeforeCall, `{"request":{"messages":[{"ROLE":"user","Parts":[{"type":"text","text":"` + long + `"}],"media_summary":{"x":1}}]}}`},
	{HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","timestamp":"` + long + `"}]}}`},
	{HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"` + long + `","bogus":1}]}}`},
	{HookProvider, PhaseBeforeCall, `{"request":{"Messages":[null,{"content":"` + long + `"}]}}`},
	{HookProvider, PhaseBeforeCall, `{"hook":"` + long + `","request":{}}`},
	{HookProvider, PhaseAfterCall, `{"request":{"Messages":[]},"response":{"Message":{"role":"tool","tool_result":{"id":"1","parts":[{"type":"text","text":"` + long + `"}]},"validations":[{"validator_type":"v","details":{"n":2.0},"timestamp":"2026-01-01T00:00:00Z"}]}}}`},
	{HookProvider, PhaseAfterCall, `{"request":{},"response":{"Message":null,"ProviderID":"` + long + `"}}`},
	{HookTool, PhaseBeforeExecution, `{"request":{"Name":"t","Args":{"a":"` + long + `"}}}`},
	{HookTool, PhaseAfterExecution, `{"request":{"Args":null},"response":{"Content":"` + long + `","latencyms":3}}`},
	{HookSession, PhaseSessionUpdate, `{"event":{"Messages":[{"role":"user","content":"` + long + `","reasoning":{"x":"` + long + `"}}],"Metadata":{"a":[1.0]}}}`},
	{HookSession, PhaseSessionEnd, `{"event":{"Messages":[{"role":"user","reasoning":"` + long + `"}]}}`},
	{HookEval, "", `{"eval_id":"e","explanation":"` + long + `","value":{"n":1.0},"details":{"d":[2.50]},"violations":[{"turn_index":1,"evidence":{"e":3.0}}]}`},
	// Refused, both ways: one field twice, by case; a lone surrogate.
	{HookProvider, PhaseBeforeCall, `{"request":{"messages":[{"role":"user","content":"` + long + `"}],"Messages":null}}`},
	{HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"` + long + `\udbff"}]}}`},
}

// checkLean is the fuzz oracle for the lean decoders: decodeInput, which
// takes them when it can, must decode data exactly as the checking
// decoder alone does, or fail exactly as it does.
func checkLean(t *testing.T, hook, phase string, data []byte) {
	t.Helper()
	got, gotErr := decodeInput(hook, phase, data)
	want, wantErr := decodeChecked(hook, phase, data)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("decodeInput(%s, %q) error %v, checking decoder %v", callName(hook, phase), data, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeInput(%s, %q) =\n%#v\nchecking decoder:\n%#v", callName(hook, phase), data, got, want)
	}
}

func TestLeanMatchesChecked(t *testing.T) {
	for _, seed := range leanSeeds {
		checkLean(t, seed.hook, seed.phase, []byte(seed.doc))
	}
	for _, v := range loadVectors(t) {
		hook, phase := hookPhaseOf(t, v.Stdin)
		checkLean(t, hook, phase, v.Stdin)
	}
}

// TestLeanTakesLongStrings checks that a document whose long strings are
// all where strings belong is decoded by the lean decoders, not whole.
func TestLeanTakesLongStrings(t *testing.T) {
	for _, seed := range leanSeeds[:2] {
		data := []byte(seed.doc)
		skel, ok := scanDocument(data, elideOver)
		if !ok {
			t.Fatalf("%s: scan failed", seed.doc)
		}
		if _, err := decodeChecked(seed.hook, seed.phase, skel); err != nil {
			t.Fatalf("skeleton %s: %v", skel, err)
		}
		if _, err := decodeLean(seed.hook, seed.phase, data); err != nil {
			t.Fatalf("decodeLean: %v", err)
		}
	}
}

// TestLeanShadowsEveryInterface walks what the lean decoders hand to
// json.Unmarshal as it is and fails on any interface value it could
// reach: json.Unmarshal would make its numbers float64, where the checking
// decoder keeps json.Number. A new field of that kind needs a useNumber
// shadow in lean.go, and its name here.
func TestLeanShadowsEveryInterface(t *testing.T) {
	shadowed := map[string]bool{
		"ProviderRequest.Messages": true, "ProviderRequest.Metadata": true,
		"ProviderResponse.Message": true,
		"SessionEvent.Messages":    true, "SessionEvent.Metadata": true,
		"Message.Meta": true, "Message.Validations": true,
		"EvalResult.Value": true, "EvalResult.Details": true, "EvalResult.Violations": true,
	}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] || typ == reflect.TypeFor[time.Time]() || typ == reflect.TypeFor[json.RawMessage]() {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Interface:
			t.Errorf("%s: an interface value reaches json.Unmarshal", path)
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(path, typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				name := typ.Name() + "." + f.Name
				if shadowed[name] {
					continue
				}
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[ProviderRequest](), reflect.TypeFor[ProviderResponse](),
		reflect.TypeFor[ToolRequest](), reflect.TypeFor[ToolResponse](),
		reflect.TypeFor[SessionEvent](), reflect.TypeFor[Message](), reflect.TypeFor[EvalResult](),
	} {
		walk(typ.Name(), typ)
	}
}
