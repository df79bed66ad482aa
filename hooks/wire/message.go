package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Message is one conversation message as PromptKit's runtime/types.Message
// puts it on the wire. The tags document the keys; the encoding itself is
// MarshalJSON's, which appends a derived "media_summary" and moves "content"
// last, exactly as PromptKit does.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`

	Parts      []ContentPart      `json:"parts,omitempty"`
	ToolCalls  []MessageToolCall  `json:"tool_calls,omitempty"`
	ToolResult *MessageToolResult `json:"tool_result,omitempty"`

	Timestamp    time.Time      `json:"timestamp,omitempty"` // a struct: never omitted
	LatencyMs    int64          `json:"latency_ms,omitempty"`
	CostInfo     *CostInfo      `json:"cost_info,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Meta         map[string]any `json:"meta,omitempty"`

	// Reasoning is PromptKit's *ReasoningTrace, kept as raw JSON so that
	// whatever shape the trace has travels through untouched.
	Reasoning json.RawMessage `json:"reasoning,omitempty"`

	Validations []ValidationResult `json:"validations,omitempty"`
}

// Content part types PromptKit knows. Parts of any other type (for example
// "thinking") are carried but count neither as text nor as media.
const (
	ContentTypeText     = "text"
	ContentTypeImage    = "image"
	ContentTypeAudio    = "audio"
	ContentTypeVideo    = "video"
	ContentTypeDocument = "document"
)

// ContentPart is one piece of a multimodal message or tool result.
type ContentPart struct {
	Type  string        `json:"type"`
	Text  *string       `json:"text,omitempty"`
	Media *MediaContent `json:"media,omitempty"`
}

// MediaContent locates or carries the media of a non-text ContentPart.
type MediaContent struct {
	Data             *string `json:"data,omitempty"` // base64
	FilePath         *string `json:"file_path,omitempty"`
	URL              *string `json:"url,omitempty"`
	StorageReference *string `json:"storage_reference,omitempty"`
	MIMEType         string  `json:"mime_type"`
	Format           *string `json:"format,omitempty"`
	SizeKB           *int64  `json:"size_kb,omitempty"`
	Detail           *string `json:"detail,omitempty"`
	Caption          *string `json:"caption,omitempty"`
	Duration         *int    `json:"duration,omitempty"`
	BitRate          *int    `json:"bit_rate,omitempty"`
	Channels         *int    `json:"channels,omitempty"`
	Width            *int    `json:"width,omitempty"`
	Height           *int    `json:"height,omitempty"`
	FPS              *int    `json:"fps,omitempty"`
	PolicyName       *string `json:"policy_name,omitempty"`
}

// MessageToolCall is an assistant's request to call a tool.
type MessageToolCall struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Args             json.RawMessage   `json:"args"`
	ProviderMetadata map[string]string `json:"provider_metadata,omitempty"`
}

// MessageToolResult is what a tool returned, carried by a "tool" message.
type MessageToolResult struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Error     string        `json:"error,omitempty"`
	ErrorType string        `json:"error_type,omitempty"`
	Parts     []ContentPart `json:"parts,omitempty"`
	LatencyMs int64         `json:"latency_ms"`
}

// CostInfo is the token usage and cost PromptKit attaches to a message.
type CostInfo struct {
	InputTokens    int                `json:"input_tokens"`
	OutputTokens   int                `json:"output_tokens"`
	CachedTokens   int                `json:"cached_tokens,omitempty"`
	InputCostUSD   float64            `json:"input_cost_usd"`
	OutputCostUSD  float64            `json:"output_cost_usd"`
	CachedCostUSD  float64            `json:"cached_cost_usd,omitempty"`
	TotalCost      float64            `json:"total_cost_usd"`
	Quantities     map[string]float64 `json:"quantities,omitempty"`
	DimensionMatch map[string]string  `json:"dimension_match,omitempty"`
	ProviderName   string             `json:"provider_name,omitempty"`
	Capability     string             `json:"capability,omitempty"`
	Latency        time.Duration      `json:"latency_ns,omitempty"`
	Breakdown      []CostLineItem     `json:"breakdown,omitempty"`
}

// CostLineItem is one row of a CostInfo breakdown.
type CostLineItem struct {
	Provider   string            `json:"provider,omitempty"`
	Capability string            `json:"capability,omitempty"`
	Unit       string            `json:"unit"`
	Quantity   float64           `json:"quantity"`
	USD        float64           `json:"usd"`
	Dimensions map[string]string `json:"dimensions,omitempty"`
}

// ValidationResult is the outcome of one validator run on a message.
type ValidationResult struct {
	ValidatorType string         `json:"validator_type"`
	Passed        bool           `json:"passed"`
	Details       map[string]any `json:"details,omitempty"`
	Timestamp     time.Time      `json:"timestamp"`
}

// Text is the tool result's text parts concatenated without a separator,
// which is what PromptKit copies into a decoded tool message's Content.
func (r *MessageToolResult) Text() string {
	var sb strings.Builder
	for _, p := range r.Parts {
		if p.Type == ContentTypeText && p.Text != nil {
			sb.WriteString(*p.Text)
		}
	}
	return sb.String()
}

// messageFields is Message without its methods, so the standard encoder can
// do the per-field work inside MarshalJSON and UnmarshalJSON.
type messageFields Message

// MarshalJSON writes the message as PromptKit does: the tagged fields, then
// "media_summary" when there are parts, then "content" last — derived from
// the parts when Content is empty, and left out entirely for tool results.
func (m Message) MarshalJSON() ([]byte, error) {
	return marshalExact(func(s *jsonSink) error { return encodeMessage(s, m) })
}

// UnmarshalJSON reads a message the way PromptKit does — a tool message
// without content gets its tool result's text — but stricter: unknown keys
// are rejected, because a key this type does not know would be dropped and
// the hook would no longer see what PromptKit sends. "media_summary" is the
// exception; it is derived on encode, so it is accepted and ignored. Numbers
// in free-form maps stay json.Number so they re-encode unchanged.
func (m *Message) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var in struct {
		messageFields
		MediaSummary json.RawMessage `json:"media_summary"`
	}
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	return m.finish(in.messageFields)
}

// finish stores a decoded message in m, as PromptKit would have it.
func (m *Message) finish(fields messageFields) error {
	msg := Message(fields)
	switch {
	case bytes.Equal(msg.Reasoning, []byte("null")):
		msg.Reasoning = nil
	case len(msg.Reasoning) > 0 && msg.Reasoning[0] != '{':
		return fmt.Errorf("reasoning: want an object, got %s", jsonKind(msg.Reasoning))
	}
	if msg.ToolResult != nil && msg.Content == "" {
		msg.Content = msg.ToolResult.Text()
	}
	*m = msg
	return nil
}

// MarshalJSON writes Args as {} when it is missing or not valid JSON, as
// PromptKit does: a model that calls a tool without arguments, or whose
// arguments were cut off mid-stream, must not make the whole payload fail.
func (c MessageToolCall) MarshalJSON() ([]byte, error) {
	type fields MessageToolCall
	f := fields(c)
	if len(f.Args) == 0 || !json.Valid(f.Args) {
		f.Args = json.RawMessage("{}")
	}
	return json.Marshal(f)
}
