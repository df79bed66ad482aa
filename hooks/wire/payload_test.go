package wire

import (
	"encoding/json"
	"testing"
)

func vectorStdin(t *testing.T, name string) string {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return string(v.Stdin)
		}
	}
	t.Fatalf("no vector %q", name)
	return ""
}

// The round-trip test decodes before it encodes, so the decoded Content of
// a multimodal message could hide a broken derivation. These payloads are
// built the way PromptKit builds them and must still match the vectors.
func TestStdinFromGoValuesMatchesVectors(t *testing.T) {
	user := Message{Role: "user", Content: "My SSN is 123-45-6789", Timestamp: ts}
	tests := []struct {
		vector  string
		payload Payload
	}{
		{"provider_before_call_multimodal", Payload{
			Hook: HookProvider, Phase: PhaseBeforeCall,
			ProviderRequest: &ProviderRequest{ProviderID: "openai", Model: "gpt-4o", Round: 1, Messages: []Message{{
				Role: "user", Timestamp: ts,
				Parts: []ContentPart{
					{Type: ContentTypeText, Text: ptr("What is in this picture?")},
					{Type: ContentTypeImage, Media: &MediaContent{URL: ptr("https://example.com/cat.png"), MIMEType: "image/png"}},
				},
			}}},
		}},
		{"provider_after_call", Payload{
			Hook: HookProvider, Phase: PhaseAfterCall,
			ProviderRequest: &ProviderRequest{ProviderID: "openai", Model: "gpt-4o", Round: 2, Messages: []Message{
				user,
				{Role: "assistant", Timestamp: ts, LatencyMs: 812, FinishReason: "tool_calls",
					ToolCalls: []MessageToolCall{{ID: "call_1", Name: "lookup_order", Args: json.RawMessage(`{"order_id":"A-17"}`)}}},
				{Role: "tool", Content: "shipped", Timestamp: ts, ToolResult: &MessageToolResult{
					ID: "call_1", Name: "lookup_order", LatencyMs: 35,
					Parts: []ContentPart{{Type: ContentTypeText, Text: ptr("shipped")}},
				}},
			}},
			ProviderResponse: &ProviderResponse{ProviderID: "openai", Model: "gpt-4o", Round: 2, LatencyMs: 640,
				Message: Message{Role: "assistant", Content: "Your order A-17 has shipped.", Timestamp: ts, LatencyMs: 640}},
		}},
		{"provider_before_call_empty", Payload{Hook: HookProvider, Phase: PhaseBeforeCall, ProviderRequest: &ProviderRequest{}}},
		{"tool_after_execution_error", Payload{
			Hook: HookTool, Phase: PhaseAfterExecution,
			ToolRequest:  &ToolRequest{Name: "db_query", CallID: "call_10"},
			ToolResponse: &ToolResponse{Name: "db_query", CallID: "call_10", Error: "permission denied", LatencyMs: 1},
		}},
		{"tool_after_execution", Payload{
			Hook: HookTool, Phase: PhaseAfterExecution,
			ToolRequest:  &ToolRequest{Name: "db_query", CallID: "call_9", Args: json.RawMessage(`{"sql": "SELECT 1"}`)},
			ToolResponse: &ToolResponse{Name: "db_query", CallID: "call_9", Content: `[{"1":1}]`, LatencyMs: 4},
		}},
		{"session_start", Payload{Hook: HookSession, Phase: PhaseSessionStart,
			SessionEvent: &SessionEvent{SessionID: "sess-abc-123", ConversationID: "conv-1"}}},
		{"eval_result", Payload{Hook: HookEval, EvalResult: &EvalResult{
			EvalID: "assertion_1_tool_called", Type: "assertion", Score: ptr(1.0),
			Explanation: "tool 'lookup_order' was called", DurationMs: 3,
			Details: map[string]any{"tool_name": "lookup_order"}, SessionID: "sess-abc-123", TurnIndex: 1,
		}}},
		{"eval_result_skipped", Payload{Hook: HookEval, EvalResult: &EvalResult{
			EvalID: "latency_budget", Type: "metric", Skipped: true, SkipReason: "no latency data",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.vector, func(t *testing.T) {
			got, err := tt.payload.Stdin()
			if err != nil {
				t.Fatal(err)
			}
			if want := vectorStdin(t, tt.vector); string(got) != want {
				t.Errorf("stdin differs from PromptKit's\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

func TestStdinRejectsImpossiblePayloads(t *testing.T) {
	req := &ProviderRequest{}
	tests := []struct {
		name    string
		payload *Payload
		want    string
	}{
		{"nil", nil, "wire: nil payload"},
		{"unknown hook", &Payload{Hook: "model", Phase: "before_call"},
			`wire: unknown hook type "model" (want provider, tool, session or eval)`},
		{"unknown phase", &Payload{Hook: HookProvider, Phase: "before_execution", ProviderRequest: req},
			`wire: hook "provider" has no phase "before_execution" (want before_call or after_call)`},
		{"missing phase", &Payload{Hook: HookSession},
			`wire: hook "session" needs a phase (session_start, session_update or session_end)`},
		{"eval with a phase", &Payload{Hook: HookEval, Phase: "after_call", EvalResult: &EvalResult{}},
			`wire: hook "eval" has no phases, got phase "after_call"`},
		{"missing request", &Payload{Hook: HookProvider, Phase: PhaseBeforeCall},
			`wire: provider before_call payload needs a ProviderRequest`},
		{"missing response", &Payload{Hook: HookProvider, Phase: PhaseAfterCall, ProviderRequest: req},
			`wire: provider after_call payload needs a ProviderResponse`},
		{"response before the call", &Payload{Hook: HookProvider, Phase: PhaseBeforeCall, ProviderRequest: req, ProviderResponse: &ProviderResponse{}},
			`wire: provider before_call payload cannot carry a ProviderResponse`},
		{"another hook's object", &Payload{Hook: HookTool, Phase: PhaseBeforeExecution, ProviderRequest: req, ToolRequest: &ToolRequest{}},
			`wire: tool before_execution payload cannot carry a ProviderRequest`},
		{"missing event", &Payload{Hook: HookSession, Phase: PhaseSessionEnd},
			`wire: session session_end payload needs a SessionEvent`},
		{"missing eval result", &Payload{Hook: HookEval},
			`wire: eval payload needs an EvalResult`},
		{"invalid tool args", &Payload{Hook: HookTool, Phase: PhaseBeforeExecution, ToolRequest: &ToolRequest{Args: json.RawMessage(`{"a":`)}},
			`wire: encoding tool before_execution payload: json: error calling MarshalJSON for type json.RawMessage: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.payload.Stdin()
			if err == nil {
				t.Fatalf("Stdin() = %s, want error %q", b, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Stdin() error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestPhases(t *testing.T) {
	want := map[string][]string{
		HookProvider: {"before_call", "after_call"},
		HookTool:     {"before_execution", "after_execution"},
		HookSession:  {"session_start", "session_update", "session_end"},
		HookEval:     nil,
	}
	types := HookTypes()
	if len(types) != len(want) {
		t.Fatalf("HookTypes() = %v", types)
	}
	for _, hook := range types {
		got, ok := Phases(hook)
		if !ok {
			t.Errorf("Phases(%q) not ok", hook)
		}
		if len(got) != len(want[hook]) {
			t.Errorf("Phases(%q) = %v, want %v", hook, got, want[hook])
			continue
		}
		for i := range got {
			if got[i] != want[hook][i] {
				t.Errorf("Phases(%q) = %v, want %v", hook, got, want[hook])
			}
		}
	}
	if got, ok := Phases("model"); ok || got != nil {
		t.Errorf("Phases(unknown) = %v, %v", got, ok)
	}
	// Callers get their own slices.
	p, _ := Phases(HookProvider)
	p[0] = "mutated"
	if again, _ := Phases(HookProvider); again[0] != PhaseBeforeCall {
		t.Error("Phases shares its slice")
	}
}
