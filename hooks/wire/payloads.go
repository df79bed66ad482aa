package wire

import "encoding/json"

// The payload structs below deliberately have no JSON tags: PromptKit's
// runtime/hooks types have none, so on the wire their keys are the Go field
// names, every field is always present, and nil slices and maps are null.
// Renaming a field here changes the bytes a hook sees.

// ProviderRequest is the "request" of a provider hook: the call PromptKit is
// about to make (before_call) or has made (after_call).
type ProviderRequest struct {
	ProviderID   string
	Model        string
	Messages     []Message
	SystemPrompt string
	Round        int
	Metadata     map[string]any
	Replacement  string
}

// ProviderResponse is the "response" of a provider after_call hook.
type ProviderResponse struct {
	ProviderID string
	Model      string
	Message    Message
	Round      int
	LatencyMs  int64
}

// ToolRequest is the "request" of a tool hook. Args is the tool's raw JSON
// arguments; a call without arguments is encoded as null.
type ToolRequest struct {
	Name   string
	Args   json.RawMessage
	CallID string
}

// ToolResponse is the "response" of a tool after_execution hook.
type ToolResponse struct {
	Name      string
	CallID    string
	Content   string
	Error     string
	LatencyMs int64
}

// SessionEvent is the "event" of a session hook.
type SessionEvent struct {
	SessionID      string
	ConversationID string
	Messages       []Message
	TurnIndex      int
	Metadata       map[string]any
}
