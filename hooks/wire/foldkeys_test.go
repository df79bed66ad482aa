package wire

import (
	"strings"
	"testing"
)

// TestDecodeInputRefusesWhatIsNotWhatItSeems: a lone surrogate (which
// encoding/json would turn into U+FFFD) and two keys that encoding/json
// takes for one field (it keeps the last) are refused with the reason,
// wherever they are, long strings included (the fast path elides those).
func TestDecodeInputRefusesWhatIsNotWhatItSeems(t *testing.T) {
	long := strings.Repeat("x", 2*elideOver)
	for _, tc := range []struct {
		name, hook, phase, in, want string
	}{
		{"lone high surrogate", HookProvider, PhaseBeforeCall, `{"request":{"Model":"\ud800"}}`,
			`input: lone UTF-16 surrogate \ud800 at byte offset 21: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"lone low surrogate", HookProvider, PhaseBeforeCall, `{"request":{"Model":"a\uDC00b"}}`,
			`input: lone UTF-16 surrogate \uDC00 at byte offset 22: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"high surrogate then no low one", HookProvider, PhaseBeforeCall, `{"request":{"Model":"\ud83d\u0041"}}`,
			`input: lone UTF-16 surrogate \ud83d at byte offset 21: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"two high surrogates", HookProvider, PhaseBeforeCall, `{"request":{"Model":"\ud83d\ud83d\ude00"}}`,
			`input: lone UTF-16 surrogate \ud83d at byte offset 21: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"in a long string", HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"` + long + `\ud800"}]}}`,
			`input: lone UTF-16 surrogate \ud800 at byte offset 562: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"in a key", HookProvider, PhaseBeforeCall, `{"request":{"Metadata":{"\udfff":1}}}`,
			`input: lone UTF-16 surrogate \udfff at byte offset 25: decoders replace it with U+FFFD (PromptKit never sends one)`},
		{"in an eval result", HookEval, "", `{"eval_id":"e","type":"t","duration_ms":1,"message":"\ud800"}`,
			`input: lone UTF-16 surrogate \ud800 at byte offset 53: decoders replace it with U+FFFD (PromptKit never sends one)`},

		{"a field twice by case", HookProvider, PhaseBeforeCall, `{"request":{"Model":"a","model":"b"}}`,
			`input: request: keys "Model" and "model" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"escaped", HookProvider, PhaseBeforeCall, `{"request":{"Model":"a","\u006dODEL":"b"}}`,
			`input: request: keys "Model" and "mODEL" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"in a message", HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"a"},{"role":"user","Role":"system","content":"b"}]}}`,
			`input: request.Messages[1]: keys "role" and "Role" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"in a tool call", HookProvider, PhaseAfterCall, `{"request":{},"response":{"Message":{"role":"assistant","tool_calls":[{"id":"1","name":"f","NAME":"g","args":{}}]}}}`,
			`input: response.Message.tool_calls[0]: keys "name" and "NAME" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"in a tool request", HookTool, PhaseBeforeExecution, `{"request":{"Name":"a","name":"b"}}`,
			`input: request: keys "Name" and "name" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"in a session event", HookSession, PhaseSessionStart, `{"event":{"SessionID":"a","sessionid":"b"}}`,
			`input: event: keys "SessionID" and "sessionid" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"in an eval result", HookEval, "", `{"eval_id":"e","type":"t","duration_ms":1,"Type":"u"}`,
			`input: eval result: keys "type" and "Type" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
		{"Kelvin sign", HookEval, "", `{"eval_id":"e","type":"t","duration_ms":1,"skipped":true,"s\u212aipped":false}`,
			`input: eval result: keys "skipped" and "sKipped" are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once`},
	} {
		_, err := DecodeInput(tc.hook, tc.phase, []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %s:\n got %v\nwant %s", tc.name, tc.in, err, tc.want)
		}
	}
}

// TestDecodeInputKeepsWhatIs: surrogate pairs, keys of maps that differ
// in case (a map's keys are its own) and keys spelled in another case
// once reach the hook as they were.
func TestDecodeInputKeepsWhatIs(t *testing.T) {
	for _, tc := range []struct {
		name, hook, phase, in, want string
	}{
		{"a surrogate pair", HookProvider, PhaseBeforeCall, `{"request":{"Model":"\ud83d\ude00 \uD83D\uDE00"}}`, `"Model":"😀 😀"`},
		{"a surrogate pair in a long string", HookProvider, PhaseBeforeCall,
			`{"request":{"Model":"` + strings.Repeat("y", 2*elideOver) + `\ud83d\ude00"}}`, `y😀"`},
		{"other escapes", HookProvider, PhaseBeforeCall, `{"request":{"Model":"\\ud800 \u00e9 \ufffd"}}`, `"Model":"\\ud800 é �"`},
		{"map keys in two cases", HookProvider, PhaseBeforeCall, `{"request":{"Metadata":{"k":1,"K":2}}}`, `"Metadata":{"K":2,"k":1}`},
		{"meta keys in two cases", HookProvider, PhaseBeforeCall, `{"request":{"Messages":[{"role":"user","content":"c","meta":{"a":1,"A":2}}]}}`, `"meta":{"A":2,"a":1}`},
		{"a key in another case", HookProvider, PhaseBeforeCall, `{"request":{"model":"m"}}`, `"Model":"m"`},
	} {
		p, err := DecodeInput(tc.hook, tc.phase, []byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		stdin, err := p.Stdin()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(stdin), tc.want) {
			t.Errorf("%s: stdin %s does not hold %s", tc.name, stdin, tc.want)
		}
	}
}
