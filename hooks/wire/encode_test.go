package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// referenceMessage is Message encoded as it was before the stdin encoder:
// by json.Marshal, from the struct PromptKit's encoder writes.
type referenceMessage Message

func (m referenceMessage) MarshalJSON() ([]byte, error) {
	msg := Message(m)
	return json.Marshal(struct {
		messageFields
		MediaSummary *MediaSummary `json:"media_summary,omitempty"`
		Content      string        `json:"content,omitempty"`
	}{messageFields(msg), msg.MediaSummary(), msg.EncodedContent()})
}

// referenceStdin is p's stdin as json.Marshal writes it, its messages
// encoded by referenceMessage: the oracle for the stdin encoder.
func referenceStdin(p *Payload) ([]byte, error) {
	messages := func(ms []Message) []referenceMessage {
		if ms == nil {
			return nil
		}
		out := make([]referenceMessage, len(ms))
		for i, m := range ms {
			out[i] = referenceMessage(m)
		}
		return out
	}
	env := struct {
		Hook     string `json:"hook"`
		Phase    string `json:"phase"`
		Request  any    `json:"request,omitempty"`
		Response any    `json:"response,omitempty"`
		Event    any    `json:"event,omitempty"`
	}{Hook: p.Hook, Phase: p.Phase}
	switch {
	case p.EvalResult != nil:
		return json.Marshal(p.EvalResult)
	case p.ProviderRequest != nil:
		r := *p.ProviderRequest
		env.Request = struct {
			ProviderID, Model string
			Messages          []referenceMessage
			SystemPrompt      string
			Round             int
			Metadata          map[string]any
			Replacement       string
		}{r.ProviderID, r.Model, messages(r.Messages), r.SystemPrompt, r.Round, r.Metadata, r.Replacement}
		if resp := p.ProviderResponse; resp != nil {
			env.Response = struct {
				ProviderID, Model string
				Message           referenceMessage
				Round             int
				LatencyMs         int64
			}{resp.ProviderID, resp.Model, referenceMessage(resp.Message), resp.Round, resp.LatencyMs}
		}
	case p.ToolRequest != nil:
		env.Request = p.ToolRequest
		if p.ToolResponse != nil {
			env.Response = p.ToolResponse
		}
	case p.SessionEvent != nil:
		e := *p.SessionEvent
		env.Event = struct {
			SessionID, ConversationID string
			Messages                  []referenceMessage
			TurnIndex                 int
			Metadata                  map[string]any
		}{e.SessionID, e.ConversationID, messages(e.Messages), e.TurnIndex, e.Metadata}
	}
	return json.Marshal(env)
}

func mustStdin(t *testing.T, p *Payload) []byte {
	t.Helper()
	b, err := p.Stdin()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// awkward is a long string whose pieces get cut next to everything
// encoding/json escapes or replaces.
func awkward() string {
	var b strings.Builder
	for b.Len() < 4*shortString {
		b.WriteString("ab<>&\u2028\u2029\x00\x1f\"\\\t\n\x7f é€😀\xff\xc3(\xe2\x82\x80\x80\x80 ")
	}
	return b.String()
}

func TestEncodeStringMatchesMarshal(t *testing.T) {
	base := awkward()
	for shift := range 40 {
		str := base[shift:]
		want, _ := json.Marshal(str)
		got, err := marshalExact(func(s *jsonSink) error { return encodeString(s, str) })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("shift %d: encodeString differs from json.Marshal at byte %d", shift, firstDiff(got, want))
		}
	}
}

func FuzzEncodeString(f *testing.F) {
	f.Add([]byte("a<\u2028\xff\xe2\x82"), uint16(3))
	f.Fuzz(func(t *testing.T, unit []byte, n uint16) {
		str := strings.Repeat(string(unit), 1+int(n)%(2*shortString/max(1, len(unit))+2))
		want, _ := json.Marshal(str)
		got, err := marshalExact(func(s *jsonSink) error { return encodeString(s, str) })
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("encodeString(%q x %d) differs from json.Marshal at byte %d (%v)", unit, n, firstDiff(got, want), err)
		}
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStdinMatchesMarshal checks the stdin encoder against json.Marshal
// on payloads with long strings everywhere a string may be.
func TestStdinMatchesMarshal(t *testing.T) {
	s := awkward()
	ptr := func(s string) *string { return &s }
	size := int64(3)
	msgs := []Message{
		{Role: "user", Content: s, Timestamp: time.Date(2026, 4, 15, 12, 0, 0, 5, time.FixedZone("", 3600)),
			Meta: map[string]any{"k": s, "n": json.Number("1.50")}, Reasoning: json.RawMessage(`{"t":"<x>"}`)},
		{Role: "assistant", Parts: []ContentPart{
			{Type: ContentTypeText, Text: ptr(s)},
			{Type: ContentTypeImage, Media: &MediaContent{Data: ptr(s), MIMEType: "image/png", SizeKB: &size, Detail: ptr("high")}},
			{Type: ContentTypeAudio, Media: &MediaContent{URL: ptr(s), MIMEType: s}},
			{Type: "thinking"},
		}, ToolCalls: []MessageToolCall{{ID: "1", Name: s, Args: json.RawMessage(`{"b":1, "a" : "<"}`)}, {ID: "2"}},
			CostInfo:  &CostInfo{InputTokens: 1, TotalCost: 0.5, Latency: time.Second, Breakdown: []CostLineItem{{Unit: "tok", Quantity: 1e21}}},
			LatencyMs: 7, FinishReason: s},
		{Role: "tool", ToolResult: &MessageToolResult{ID: "1", Name: "t", Parts: []ContentPart{{Type: ContentTypeText, Text: ptr(s)}}},
			Validations: []ValidationResult{{ValidatorType: s, Passed: true, Details: map[string]any{"d": []any{s, 1.5, nil}}}}},
		{},
	}
	passed, score := true, 0.25
	payloads := []*Payload{
		{Hook: HookProvider, Phase: PhaseBeforeCall, ProviderRequest: &ProviderRequest{ProviderID: s, Messages: msgs, SystemPrompt: s, Metadata: map[string]any{"m": s}, Replacement: s}},
		{Hook: HookProvider, Phase: PhaseAfterCall, ProviderRequest: &ProviderRequest{Messages: []Message{}}, ProviderResponse: &ProviderResponse{Message: msgs[1], Model: s}},
		{Hook: HookTool, Phase: PhaseAfterExecution, ToolRequest: &ToolRequest{Name: s, Args: json.RawMessage(`[1, 2]`)}, ToolResponse: &ToolResponse{Content: s, Error: s}},
		{Hook: HookSession, Phase: PhaseSessionEnd, SessionEvent: &SessionEvent{SessionID: s, Messages: msgs[:1], Metadata: map[string]any{}}},
		{Hook: HookEval, EvalResult: &EvalResult{EvalID: s, Passed: &passed, Score: &score, Value: s, Explanation: s,
			Violations: []EvalViolation{{Description: s, Evidence: map[string]any{"e": s}}}}},
		{Hook: HookEval, EvalResult: &EvalResult{}},
	}
	for _, p := range payloads {
		want, err := referenceStdin(p)
		if err != nil {
			t.Fatal(err)
		}
		got := mustStdin(t, p)
		if !bytes.Equal(got, want) {
			i := firstDiff(got, want)
			t.Errorf("%s: stdin differs from json.Marshal at byte %d\n got: …%.200s\nwant: …%.200s", p.call(), i, got[max(0, i-40):], want[max(0, i-40):])
		}
		for _, m := range messagesOf(p) {
			got, err := json.Marshal(m)
			want, _ := json.Marshal(referenceMessage(m))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("json.Marshal(Message) differs from the reference at byte %d (%v)", firstDiff(got, want), err)
			}
		}
	}
}

func messagesOf(p *Payload) []Message {
	switch {
	case p.ProviderRequest != nil:
		return p.ProviderRequest.Messages
	case p.SessionEvent != nil:
		return p.SessionEvent.Messages
	}
	return nil
}

// TestEncodeErrorsNameTheValue checks that an encoding error reads as
// json.Marshal's did.
func TestEncodeErrorsNameTheValue(t *testing.T) {
	p := &Payload{Hook: HookProvider, Phase: PhaseBeforeCall, ProviderRequest: &ProviderRequest{
		Messages: []Message{{Role: "user", Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}}
	_, want := referenceStdin(p)
	_, got := p.Stdin()
	if want == nil || got == nil {
		t.Fatalf("errors %v, %v; want both", got, want)
	}
	if wantMsg := strings.ReplaceAll(want.Error(), "wire.referenceMessage", "wire.Message"); got.Error() != "wire: encoding provider before_call payload: "+wantMsg {
		t.Errorf("error\n got: %v\nwant: %v", got, wantMsg)
	}
}

func TestWalkable(t *testing.T) {
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[ProviderRequest]():   true,
		reflect.TypeFor[*MediaContent]():     true,
		reflect.TypeFor[[]ContentPart]():     true,
		reflect.TypeFor[Message]():           true,
		reflect.TypeFor[time.Time]():         false,
		reflect.TypeFor[json.RawMessage]():   false,
		reflect.TypeFor[json.Number]():       false,
		reflect.TypeFor[[]byte]():            false,
		reflect.TypeFor[MessageToolCall]():   false,
		reflect.TypeFor[[]MessageToolCall](): true, // walked; its elements are not
		reflect.TypeFor[map[string]any]():    false,
	} {
		if got := walkable(typ); got != want {
			t.Errorf("walkable(%v) = %v, want %v", typ, got, want)
		}
	}
}
