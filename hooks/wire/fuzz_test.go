package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func FuzzParseVerdict(f *testing.F) {
	for _, seed := range []string{
		`{"allow":true}`,
		`{"allow":false,"reason":"PII","enforced":true,"ack":true,"metadata":{"n":1,"l":[null]}}`,
		` {"allow":"true"} `, `{"allow":1}`, `{}`, `[]`, `null`, ``, `{"allow":true}x`, `{"allow": tr`,
		`{"allow":false,"metadata":{"n":1e400}}`, "{\"allow\":true,\"reason\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	for _, v := range loadVectors(f) {
		f.Add([]byte(v.Stdin))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		v, err := ParseVerdict(out)
		if err != nil {
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("accepted verdict %+v does not marshal: %v", v, err)
		}
		back, err := ParseVerdict(again)
		if err != nil {
			t.Fatalf("re-marshalled verdict %s rejected: %v", again, err)
		}
		// omitempty turns empty metadata into no metadata; nothing else
		// may change.
		if len(v.Metadata) == 0 {
			v.Metadata = nil
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("verdict changed on a round trip\nfirst: %+v\nagain: %+v", v, back)
		}
	})
}

// fuzzCalls are the hook calls FuzzDecodeInput picks from. The fuzzer
// chooses one by index rather than inventing hook and phase strings, which
// would almost always be rejected before the document is read.
var fuzzCalls = [][2]string{
	{HookProvider, PhaseBeforeCall}, {HookProvider, PhaseAfterCall},
	{HookTool, PhaseBeforeExecution}, {HookTool, PhaseAfterExecution},
	{HookSession, PhaseSessionStart}, {HookSession, PhaseSessionUpdate}, {HookSession, PhaseSessionEnd},
	{HookEval, ""},
}

func fuzzCallIndex(tb testing.TB, hook, phase string) uint8 {
	tb.Helper()
	for i, c := range fuzzCalls {
		if c == [2]string{hook, phase} {
			return uint8(i)
		}
	}
	tb.Fatalf("no fuzz call for %s", callName(hook, phase))
	return 0
}

func FuzzDecodeInput(f *testing.F) {
	for _, v := range loadVectors(f) {
		hook, phase := hookPhaseOf(f, v.Stdin)
		call := fuzzCallIndex(f, hook, phase)
		f.Add(call, []byte(v.Stdin))
		// The same payloads with the envelope's keys only, as a person
		// would write them.
		var env map[string]json.RawMessage
		if json.Unmarshal(v.Stdin, &env) == nil && hook != HookEval {
			delete(env, "hook")
			delete(env, "phase")
			b, _ := json.Marshal(env)
			f.Add(call, b)
		}
	}
	f.Add(fuzzCallIndex(f, HookProvider, PhaseBeforeCall), []byte(`{"request":{"Messages":[null,{"parts":[{"type":"image"}],"reasoning":null}]}}`))
	f.Add(fuzzCallIndex(f, HookTool, PhaseBeforeExecution), []byte(`{"request":{"args":{"a":"<\u2028>"}}}`))
	f.Add(fuzzCallIndex(f, HookEval, ""), []byte(`{"eval_id":"x","value":[1.0,-0,1E400]}`))
	f.Fuzz(func(t *testing.T, call uint8, data []byte) {
		c := fuzzCalls[int(call)%len(fuzzCalls)]
		hook, phase := c[0], c[1]
		p, err := DecodeInput(hook, phase, data)
		if err != nil {
			return
		}
		stdin, err := p.Stdin()
		if err != nil {
			t.Fatalf("decoded payload does not encode: %v\ninput: %q", err, data)
		}
		p2, err := DecodeInput(hook, phase, stdin)
		if err != nil {
			t.Fatalf("own stdin does not decode: %v\nstdin: %s", err, stdin)
		}
		stdin2, err := p2.Stdin()
		if err != nil {
			t.Fatalf("re-decoded payload does not encode: %v", err)
		}
		if !bytes.Equal(stdin, stdin2) {
			t.Fatalf("stdin not stable\nfirst: %s\nagain: %s", stdin, stdin2)
		}
	})
}
