package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
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
	for _, seed := range []string{
		`{"allow":false,"allow":true}`, `{"allow":false,"Allow":true}`, `{"ALLOW":true}`,
		`{"allow":true,"metadata":{"k":1,"k":2}}`, `{"allow":true,"x":{"a":[{"b":1,"b":2}]}}`,
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
		if v.Allow && !unambiguousAllow(out) {
			t.Fatalf("allowed %q: want one \"allow\" key (in any case) at the top, its value true", out)
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

// unambiguousAllow is the fuzz oracle for an allow: out is one JSON
// object whose top level has exactly one key that any decoder could take
// for "allow" (encoding/json matches struct fields regardless of case),
// and its value is true, and which no decoder could read two ways (no
// object anywhere in it holds a key twice).
func unambiguousAllow(out []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(out))
	var top map[string]json.RawMessage
	if dec.Decode(&top) != nil {
		return false
	}
	n := 0
	for k, raw := range top {
		if strings.EqualFold(k, "allow") {
			n++
			if string(raw) != "true" {
				return false
			}
		}
	}
	return n == 1 && !repeatsAKey(out)
}

// repeatsAKey reports whether any object in doc holds a key twice,
// counting the top level's keys without regard to case. It decodes each
// object twice, into a map and into a list of its members, and compares
// the counts: a map keeps one member per key.
func repeatsAKey(doc []byte) bool {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return true
	}
	var walk func(raw json.RawMessage, top bool) bool
	walk = func(raw json.RawMessage, top bool) bool {
		dec := json.NewDecoder(bytes.NewReader(raw))
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return true
				}
				k := kt.(string)
				if top {
					k = strings.ToLower(k)
				}
				if seen[k] {
					return true
				}
				seen[k] = true
				var member json.RawMessage
				if dec.Decode(&member) != nil || walk(member, false) {
					return true
				}
			}
		case json.Delim('['):
			for dec.More() {
				var member json.RawMessage
				if dec.Decode(&member) != nil || walk(member, false) {
					return true
				}
			}
		}
		return false
	}
	return walk(doc, true)
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
	for _, seed := range leanSeeds {
		f.Add(fuzzCallIndex(f, seed.hook, seed.phase), []byte(seed.doc))
	}
	f.Fuzz(func(t *testing.T, call uint8, data []byte) {
		c := fuzzCalls[int(call)%len(fuzzCalls)]
		hook, phase := c[0], c[1]
		checkLean(t, hook, phase, data)
		p, err := DecodeInput(hook, phase, data)
		if err != nil {
			return
		}
		if want, err := referenceStdin(p); err != nil || !bytes.Equal(mustStdin(t, p), want) {
			t.Fatalf("stdin is not json.Marshal's (%v)\n got: %s\nwant: %s", err, mustStdin(t, p), want)
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
