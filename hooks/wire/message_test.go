package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

var ts = time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

func TestMessageMediaSummaryAndContent(t *testing.T) {
	m := Message{
		Role: "user",
		Parts: []ContentPart{
			{Type: ContentTypeText, Text: ptr("Compare these")},
			{Type: ContentTypeImage, Media: &MediaContent{Data: ptr("QUJDRA=="), MIMEType: "image/png", Detail: ptr("high")}},
			{Type: ContentTypeImage, Media: &MediaContent{Data: ptr("QUJD"), FilePath: ptr("/tmp/a.png"), MIMEType: "image/png"}},
			{Type: ContentTypeAudio, Media: &MediaContent{Data: ptr("AAAA"), URL: ptr("https://x/a.mp3"), MIMEType: "audio/mpeg"}},
			{Type: ContentTypeVideo, Media: &MediaContent{StorageReference: ptr("s3://b/v.mp4"), MIMEType: "video/mp4", SizeKB: ptr(int64(2))}},
			{Type: ContentTypeDocument, Media: &MediaContent{MIMEType: "application/pdf"}},
			{Type: "thinking", Text: ptr("hmm")},
			{Type: ContentTypeImage},
			{Type: ContentTypeText, Text: ptr("second")},
		},
		Timestamp: ts,
	}
	want := `{"role":"user","parts":[` +
		`{"type":"text","text":"Compare these"},` +
		`{"type":"image","media":{"data":"QUJDRA==","mime_type":"image/png","detail":"high"}},` +
		`{"type":"image","media":{"data":"QUJD","file_path":"/tmp/a.png","mime_type":"image/png"}},` +
		`{"type":"audio","media":{"data":"AAAA","url":"https://x/a.mp3","mime_type":"audio/mpeg"}},` +
		`{"type":"video","media":{"storage_reference":"s3://b/v.mp4","mime_type":"video/mp4","size_kb":2}},` +
		`{"type":"document","media":{"mime_type":"application/pdf"}},` +
		`{"type":"thinking","text":"hmm"},` +
		`{"type":"image"},` +
		`{"type":"text","text":"second"}],` +
		`"timestamp":"2026-04-15T12:00:00Z",` +
		`"media_summary":{"total_parts":9,"text_parts":2,"image_parts":3,"audio_parts":1,"video_parts":1,"document_parts":1,"media_items":[` +
		`{"type":"image","source":"inline data","mime_type":"image/png","size_bytes":6,"detail":"high","loaded":true},` +
		`{"type":"image","source":"/tmp/a.png","mime_type":"image/png","size_bytes":3,"loaded":true},` +
		`{"type":"audio","source":"https://x/a.mp3","mime_type":"audio/mpeg","size_bytes":0,"loaded":true},` +
		`{"type":"video","source":"s3://b/v.mp4","mime_type":"video/mp4","size_bytes":2048,"loaded":false},` +
		`{"type":"document","source":"unknown","mime_type":"application/pdf","size_bytes":0,"loaded":false,"error":"no data source"},` +
		`{"type":"image","source":"","mime_type":"","size_bytes":0,"loaded":false,"error":"no media content"}]},` +
		`"content":"Compare these second [3 image(s), 1 audio file(s), 1 video(s)]"}`
	got := mustMarshal(t, m)
	if got != want {
		t.Fatalf("encoding differs\n got: %s\nwant: %s", got, want)
	}

	// Decoding keeps the derived content and ignores the summary, so the
	// bytes survive a round trip.
	var back Message
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if back.Content != "Compare these second [3 image(s), 1 audio file(s), 1 video(s)]" {
		t.Errorf("decoded Content = %q", back.Content)
	}
	if again := mustMarshal(t, back); again != want {
		t.Errorf("round trip differs\n got: %s\nwant: %s", again, want)
	}
}

func TestMessageEncodedContent(t *testing.T) {
	doc := ContentPart{Type: ContentTypeDocument, Media: &MediaContent{URL: ptr("https://x/d.pdf"), MIMEType: "application/pdf"}}
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"plain content", Message{Content: "hi"}, "hi"},
		{"empty", Message{}, ""},
		{"content wins over parts", Message{Content: "mine", Parts: []ContentPart{{Type: "text", Text: ptr("theirs")}}}, "mine"},
		{"text parts joined by spaces", Message{Parts: []ContentPart{{Type: "text", Text: ptr("a")}, {Type: "text", Text: ptr("b")}}}, "a b"},
		{"text part without text skipped", Message{Parts: []ContentPart{{Type: "text"}, {Type: "text", Text: ptr("b")}}}, "b"},
		{"empty text part kept", Message{Parts: []ContentPart{{Type: "text", Text: ptr("")}, {Type: "text", Text: ptr("b")}}}, " b"},
		{"documents only", Message{Parts: []ContentPart{doc, doc}}, "[]"},
		{"text and document", Message{Parts: []ContentPart{{Type: "text", Text: ptr("see")}, doc}}, "see []"},
		{"unknown type alone", Message{Parts: []ContentPart{{Type: "thinking", Text: ptr("x")}}}, "[]"},
		{"video then audio in fixed order", Message{Parts: []ContentPart{{Type: "video"}, {Type: "audio"}, {Type: "video"}}}, "[1 audio file(s), 2 video(s)]"},
		{"tool result never has content", Message{Content: "x", ToolResult: &MessageToolResult{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.msg.EncodedContent(); got != tt.want {
				t.Errorf("EncodedContent() = %q, want %q", got, tt.want)
			}
			encoded := mustMarshal(t, tt.msg)
			hasKey := strings.Contains(encoded, `"content":`)
			if hasKey != (tt.want != "") {
				t.Errorf("content key present = %v in %s", hasKey, encoded)
			}
			if !strings.HasSuffix(encoded, `"content":`+mustMarshal(t, tt.want)+`}`) && tt.want != "" {
				t.Errorf("content is not last or differs: %s", encoded)
			}
		})
	}
}

func TestMessageWithoutPartsHasNoSummary(t *testing.T) {
	got := mustMarshal(t, Message{Role: "user", Content: "hi", Parts: []ContentPart{}})
	want := `{"role":"user","timestamp":"0001-01-01T00:00:00Z","content":"hi"}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if s := (Message{}).MediaSummary(); s != nil {
		t.Errorf("MediaSummary() = %+v, want nil", s)
	}
}

func TestMediaSummaryOmitsEmptyItems(t *testing.T) {
	got := mustMarshal(t, Message{Parts: []ContentPart{{Type: "text", Text: ptr("a")}}}.MediaSummary())
	want := `{"total_parts":1,"text_parts":1,"image_parts":0,"audio_parts":0,"video_parts":0,"document_parts":0}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestToolResultContentCopiedOnDecode(t *testing.T) {
	in := `{"role":"tool","tool_result":{"id":"c1","name":"lookup","parts":[` +
		`{"type":"text","text":"ship"},{"type":"image","media":{"url":"u","mime_type":"image/png"}},{"type":"text","text":"ped"}],` +
		`"latency_ms":3},"timestamp":"2026-04-15T12:00:00Z"}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.Content != "shipped" {
		t.Errorf("Content = %q, want the text parts concatenated: %q", m.Content, "shipped")
	}
	if got := mustMarshal(t, m); got != in {
		t.Errorf("re-encoded tool message differs\n got: %s\nwant: %s", got, in)
	}

	var own Message
	if err := json.Unmarshal([]byte(`{"role":"tool","content":"mine","tool_result":{"id":"c","name":"n","parts":[{"type":"text","text":"x"}],"latency_ms":0}}`), &own); err != nil {
		t.Fatal(err)
	}
	if own.Content != "mine" {
		t.Errorf("explicit content replaced: %q", own.Content)
	}
}

func TestToolCallArgsNormalized(t *testing.T) {
	tests := []struct {
		args json.RawMessage
		want string
	}{
		{nil, `{}`},
		{json.RawMessage{}, `{}`},
		{json.RawMessage(`{"path":"foo`), `{}`},
		{json.RawMessage(`not json`), `{}`},
		{json.RawMessage(`null`), `null`},
		{json.RawMessage(`{"a": 1, "b": "<x>"}`), `{"a":1,"b":"\u003cx\u003e"}`},
		{json.RawMessage(`[1,2]`), `[1,2]`},
	}
	for _, tt := range tests {
		got := mustMarshal(t, MessageToolCall{ID: "c", Name: "n", Args: tt.args})
		want := `{"id":"c","name":"n","args":` + tt.want + `}`
		if got != want {
			t.Errorf("Args %q: got %s, want %s", tt.args, got, want)
		}
	}
	// Inside a message too, where the call is encoded as a slice element.
	got := mustMarshal(t, Message{Role: "assistant", ToolCalls: []MessageToolCall{{ID: "c", Name: "n", ProviderMetadata: map[string]string{"k": "v"}}}})
	want := `{"role":"assistant","tool_calls":[{"id":"c","name":"n","args":{},"provider_metadata":{"k":"v"}}],"timestamp":"0001-01-01T00:00:00Z"}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestMessageRoundTripsEveryField(t *testing.T) {
	in := `{"role":"assistant",` +
		`"tool_calls":[{"id":"c","name":"n","args":{"q":[1,2.50,"\u003c"]}}],` +
		`"timestamp":"2026-04-15T12:00:00.123456789+02:00","latency_ms":7,` +
		`"cost_info":{"input_tokens":1,"output_tokens":2,"cached_tokens":3,"input_cost_usd":0.1,"output_cost_usd":0.2,"cached_cost_usd":0.01,"total_cost_usd":0.31,` +
		`"quantities":{"tokens":3},"dimension_match":{"size":"1024"},"provider_name":"openai","capability":"chat","latency_ns":1500000,` +
		`"breakdown":[{"provider":"openai","capability":"chat","unit":"token","quantity":3,"usd":0.31,"dimensions":{"a":"b"}}]},` +
		`"finish_reason":"stop","meta":{"big":123456789012345678901234567890,"f":1.50,"nested":{"z":[true,null]}},` +
		`"reasoning":{"summary":"because","tokens":12},` +
		`"validations":[{"validator_type":"length","passed":false,"details":{"max":10},"timestamp":"2026-04-15T12:00:00Z"}],` +
		`"content":"done"}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if got := mustMarshal(t, m); got != in {
		t.Errorf("round trip differs\n got: %s\nwant: %s", got, in)
	}
}

func TestMessageDecodeStrictness(t *testing.T) {
	// media_summary is derived, so any value is accepted and dropped.
	var m Message
	in := `{"role":"user","parts":[{"type":"text","text":"a"}],"media_summary":{"total_parts":99},"content":"a"}`
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatalf("media_summary rejected: %v", err)
	}
	if got := mustMarshal(t, m); !strings.Contains(got, `"media_summary":{"total_parts":1,`) {
		t.Errorf("summary not recomputed: %s", got)
	}

	for in, want := range map[string]string{
		`{"role":"user","colour":"red"}`:                                 `json: unknown field "colour"`,
		`{"role":"user","parts":[{"type":"text","txt":"a"}]}`:            `json: unknown field "txt"`,
		`{"role":"user","reasoning":"thought hard"}`:                     `reasoning: want an object, got a string`,
		`{"role":"user","tool_calls":[{"id":"c","extra":true}]}`:         `json: unknown field "extra"`,
		`{"role":"user","parts":[{"type":"image","media":{"uri":"x"}}]}`: `json: unknown field "uri"`,
	} {
		var m Message
		err := json.Unmarshal([]byte(in), &m)
		if err == nil || err.Error() != want {
			t.Errorf("Unmarshal(%s) error = %v, want %q", in, err, want)
		}
	}

	var null Message
	if err := json.Unmarshal([]byte(`{"role":"user","reasoning":null}`), &null); err != nil || null.Reasoning != nil {
		t.Errorf("null reasoning: err=%v Reasoning=%q, want nil", err, null.Reasoning)
	}
	if got := mustMarshal(t, null); bytes.Contains([]byte(got), []byte("reasoning")) {
		t.Errorf("null reasoning re-encoded: %s", got)
	}
}
