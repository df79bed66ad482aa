package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeInputErrors(t *testing.T) {
	tests := []struct {
		name, hook, phase, in, want string
	}{
		// The call itself.
		{"unknown hook", "model", "before_call", `{}`,
			`input: unknown hook type "model" (want provider, tool, session or eval)`},
		{"unknown phase", "provider", "during", `{}`,
			`input: hook "provider" has no phase "during" (want before_call or after_call)`},
		{"missing phase", "tool", "", `{}`,
			`input: hook "tool" needs a phase (before_execution or after_execution)`},
		{"eval phase", "eval", "after_call", `{}`,
			`input: hook "eval" has no phases, got phase "after_call"`},

		// The document.
		{"null message", "provider", "before_call", `{"request":{"Messages":[null]}}`,
			`input: request: Messages[0]: null is not a message`},
		{"invalid utf-8", "provider", "before_call", "{\"request\":{\"Model\":\"gpt\xff\"}}",
			`input: invalid UTF-8 at byte offset 24 (PromptKit never sends invalid UTF-8)`},
		{"duplicate key", "provider", "before_call", `{"request":{"Model":"a","Model":"b"}}`,
			`input: key "Model" appears twice in one object: PromptKit never sends that, and decoders disagree on which counts`},
		{"empty", "provider", "before_call", " \n\t", `input: empty document, want a JSON object`},
		{"syntax", "provider", "before_call", "{\n  \"request\": {\n    \"Model\": ,\n  }\n}",
			`input: invalid JSON at line 3, column 14: invalid character ',' looking for beginning of value`},
		{"syntax after a multibyte character", "provider", "before_call", "{\"request\": {\"Model\": \"é\" x}}",
			`input: invalid JSON at line 1, column 27: invalid character 'x' after object key:value pair`},
		{"truncated", "provider", "before_call", `{"request": {`,
			`input: invalid JSON at line 1, column 13: unexpected end of JSON input`},
		{"truncated literal", "provider", "before_call", "{\"request\": nul",
			`input: invalid JSON at line 1, column 15: unexpected end of JSON input`},
		{"trailing data", "provider", "before_call", `{"request":{}} {}`,
			`input: invalid JSON at line 1, column 16: invalid character '{' after top-level value`},
		{"not an object", "provider", "before_call", `[{"request":{}}]`, `input: want a JSON object, got an array`},
		{"eval not an object", "eval", "", `null`, `input: want a JSON object, got null`},

		// Top-level keys.
		{"missing request", "tool", "before_execution", `{"hook":"tool"}`,
			`input: tool before_execution needs a "request" object`},
		{"missing response", "provider", "after_call", `{"request":{}}`,
			`input: provider after_call needs a "response" object`},
		{"missing event", "session", "session_start", `{}`,
			`input: session session_start needs an "event" object`},
		{"payload not an object", "provider", "after_call", `{"request":{},"response":[]}`,
			`input: "response" must be a JSON object, got an array`},
		{"payload null", "provider", "before_call", `{"request":null}`,
			`input: "request" must be a JSON object, got null`},
		{"key the phase does not use", "provider", "before_call", `{"request":{},"response":{}}`,
			`input: provider before_call does not take "response"`},
		{"key another hook uses", "tool", "after_execution", `{"request":{},"response":{},"event":{}}`,
			`input: tool after_execution does not take "event"`},
		{"unknown key", "provider", "after_call", `{"request":{},"response":{},"reqest":{}}`,
			`input: unknown key "reqest" (keys for provider after_call: hook, phase, request, response)`},
		{"hook mismatch", "provider", "before_call", `{"hook":"tool","request":{}}`,
			`input: "hook" is "tool", want "provider"`},
		{"phase mismatch", "provider", "before_call", `{"hook":"provider","phase":"after_call","request":{}}`,
			`input: "phase" is "after_call", want "before_call"`},
		{"hook not a string", "provider", "before_call", `{"hook":null,"request":{}}`,
			`input: "hook" must be a string, got null`},

		// Inside the payload objects.
		{"unknown field", "provider", "before_call", `{"request":{"Modle":"gpt-4o"}}`,
			`input: request: unknown field "Modle"`},
		{"wrong type", "provider", "before_call", `{"request":{"Round":"1"}}`,
			`input: request: Round: want an integer, got a string`},
		{"not an integer", "tool", "after_execution", `{"request":{},"response":{"LatencyMs":1.5}}`,
			`input: response: LatencyMs: want an integer, got 1.5`},
		{"messages not an array", "session", "session_update", `{"event":{"Messages":{}}}`,
			`input: event: Messages: want an array, got an object`},
		{"unknown message field names the message", "provider", "before_call",
			`{"request":{"Messages":[{"role":"user"},{"rol":"user"}]}}`,
			`input: request: Messages[1]: unknown field "rol"`},
		{"wrong type deep in a message", "provider", "before_call",
			`{"request":{"Messages":[{"role":"user","parts":[{"type":"text","text":5}]}]}}`,
			`input: request: Messages[0]: parts.text: want a string, got a number`},
		{"response message", "provider", "after_call", `{"request":{},"response":{"Message":{"role":1}}}`,
			`input: response: Message: role: want a string, got a number`},
		{"bad timestamp", "session", "session_end", `{"event":{"Messages":[{"timestamp":"yesterday"}]}}`,
			`input: event: Messages[0]: invalid timestamp: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{"timestamp not a string", "session", "session_end", `{"event":{"Messages":[{"timestamp":1}]}}`,
			`input: event: Messages[0]: invalid timestamp: want an RFC 3339 string`},
		{"tool args must be JSON", "tool", "before_execution", `{"request":{"Args":{"a":}}}`,
			`input: invalid JSON at line 1, column 25: invalid character '}' looking for beginning of value`},
		{"eval unknown field", "eval", "", `{"eval_id":"x","scor":1}`,
			`input: eval result: unknown field "scor"`},
		{"eval wrong type", "eval", "", `{"eval_id":"x","passed":"yes"}`,
			`input: eval result: passed: want a boolean, got a string`},
		{"eval has no envelope", "eval", "", `{"hook":"eval","eval_id":"x"}`,
			`input: eval result: unknown field "hook"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeInput(tt.hook, tt.phase, []byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeInput succeeded (%+v), want error %q", p, tt.want)
			}
			if p != nil {
				t.Errorf("payload returned alongside an error")
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestDecodeInputErrorsKeepTheCause(t *testing.T) {
	_, err := DecodeInput(HookProvider, PhaseBeforeCall, []byte(`{"request":{"Round":"1"}}`))
	var rerr *readableError
	if !errors.As(err, &rerr) || errors.Unwrap(rerr) == nil {
		t.Fatalf("error %v does not wrap the decoder's error", err)
	}
}

func TestDecodeInputAccepts(t *testing.T) {
	tests := []struct {
		name, hook, phase, in, stdin string
	}{
		{"bare payload keys", HookProvider, PhaseBeforeCall, `{"request":{"Model":"m"}}`,
			`{"hook":"provider","phase":"before_call","request":{"ProviderID":"","Model":"m","Messages":null,"SystemPrompt":"","Round":0,"Metadata":null,"Replacement":""}}`},
		{"empty and null stay apart", HookSession, PhaseSessionUpdate, `{"event":{"Messages":[],"Metadata":{}}}`,
			`{"hook":"session","phase":"session_update","event":{"SessionID":"","ConversationID":"","Messages":[],"TurnIndex":0,"Metadata":{}}}`},
		{"keys match case-insensitively", HookTool, PhaseBeforeExecution, `{"request":{"name":"t","args":{"b": 2,"a":[1]},"callid":"c"}}`,
			`{"hook":"tool","phase":"before_execution","request":{"Name":"t","Args":{"b":2,"a":[1]},"CallID":"c"}}`},
		{"numbers kept as written", HookProvider, PhaseBeforeCall, `{"request":{"Metadata":{"id":12345678901234567890123,"ratio":0.10,"e":1E3}}}`,
			`{"hook":"provider","phase":"before_call","request":{"ProviderID":"","Model":"","Messages":null,"SystemPrompt":"","Round":0,"Metadata":{"e":1E3,"id":12345678901234567890123,"ratio":0.10},"Replacement":""}}`},
		{"html characters escaped as PromptKit does", HookTool, PhaseAfterExecution,
			`{"request":{},"response":{"Content":"<b>&</b>"}}`,
			`{"hook":"tool","phase":"after_execution","request":{"Name":"","Args":null,"CallID":""},"response":{"Name":"","CallID":"","Content":"\u003cb\u003e\u0026\u003c/b\u003e","Error":"","LatencyMs":0}}`},
		{"eval result", HookEval, "", `{"eval_id":"e","type":"t","value":{"n":1.0},"passed":false}`,
			`{"eval_id":"e","type":"t","passed":false,"value":{"n":1.0},"duration_ms":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeInput(tt.hook, tt.phase, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Stdin()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.stdin {
				t.Errorf("stdin\n got: %s\nwant: %s", got, tt.stdin)
			}
		})
	}
}

func TestDecodeInputFillsThePayload(t *testing.T) {
	p, err := DecodeInput(HookProvider, PhaseAfterCall, []byte(`{"request":{"Round":2},"response":{"Message":{"role":"assistant","content":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Hook != HookProvider || p.Phase != PhaseAfterCall || p.ProviderRequest == nil || p.ProviderRequest.Round != 2 ||
		p.ProviderResponse == nil || p.ProviderResponse.Message.Content != "hi" ||
		p.ToolRequest != nil || p.ToolResponse != nil || p.SessionEvent != nil || p.EvalResult != nil {
		t.Errorf("payload = %+v", p)
	}
}

// TestInputErrorsQuoteLittle: an error never repeats more than maxQuote
// bytes of any one piece of a hostile document.
func TestInputErrorsQuoteLittle(t *testing.T) {
	big := strings.Repeat("k", 10000)
	for _, in := range []string{
		`{"request":{"` + big + `":1}}`,
		`{"` + big + `":{}}`,
		`{"request":{"Messages":[{"role":"user","content":"x","` + big + `":1}]}}`,
		`{"request":{"Messages":[{"role":"user","timestamp":"` + big + `"}]}}`,
	} {
		_, err := DecodeInput(HookProvider, PhaseBeforeCall, []byte(in))
		if err == nil {
			t.Fatalf("%.60s... accepted", in)
		}
		if msg := err.Error(); len(msg) > 400 || !strings.Contains(msg, strings.Repeat("k", maxQuote)+`..."`) {
			t.Errorf("%d bytes: %.200s", len(msg), msg)
		}
	}
	if got := clipQuotes(`a "short" b "`+big+`" c "open`, 4); got != `a "shor..." b "kkkk..." c "open` {
		t.Errorf("clipQuotes = %q", got)
	}
}
